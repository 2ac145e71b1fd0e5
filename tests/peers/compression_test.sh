#!/bin/bash
# accept-encoding negotiation of //examples:http2_server (issue 6) with real
# clients over h2c: Debian's nghttp (which inflates gzip and deflate itself
# and writes zstd bodies as received) and curl (raw bodies without
# --compressed, decoded with it), bodies checked with gzip -dc / zstd -dc
# against the file. Covers: the threshold (small files stay identity),
# identity, no header, browser and curl values (zstd first), gzip;q=0, 406
# for identity;q=0, HEAD, a file above the 1 MiB small-file cache, one above
# --compress_max_bytes, a changed file, --encodings and
# --compress_min_bytes.
# Usage: compression_test.sh PATH_TO_http2_server

source "$(dirname "$0")/peer_lib.sh"
CURL=/usr/bin/curl
ZSTD=/usr/bin/zstd
GZIP=/bin/gzip
check_tools "$NGHTTP" "$CURL" "$ZSTD" "$GZIP"

SERVER="$1"
ROOT="$WORK/root"
mkdir -p "$ROOT"
text() {  # OCTETS: compressible text
  yes 'the quick brown fox jumps over the lazy dog, 0123456789' | head -c "$1"
}
text 1023 >"$ROOT/small.txt"
text 65536 >"$ROOT/page.html"
text $((2 << 20)) >"$ROOT/large.txt"
text $((3 << 20)) >"$ROOT/capped.txt"
head -c 65536 /dev/urandom >"$ROOT/noise.bin"

start_server "$SERVER" --root="$ROOT" --compress_max_bytes=$((3 << 20))
BASE="http://127.0.0.1:$SERVER_PORT"
N() { timeout 30 "$NGHTTP" "$@"; }
C() { timeout 30 "$CURL" -sS --http2-prior-knowledge "$@"; }

# headers NAME LOG: the response header's value in an nghttp -v log
header() { sed -n "s/^.*recv (stream_id=[0-9]*) $1: //p" "$2" | head -1; }

# get NAME PATH ACCEPT: nghttp -v with accept-encoding ACCEPT (nghttp sends
# "gzip, deflate" when not given one); body in $WORK/NAME.out, log in
# $WORK/NAME.log
get() {
  N -v -H "accept-encoding: $3" "$BASE$2" >"$WORK/$1.log" 2>&1 || fail "$1: nghttp exit $?"
  N -H "accept-encoding: $3" "$BASE$2" >"$WORK/$1.out" 2>/dev/null || fail "$1: nghttp exit $?"
}

# expect NAME STATUS CONTENT-ENCODING VARY: ("" for absent)
expect() {
  local log="$WORK/$1.log"
  [[ "$(header :status "$log")" == "$2" ]] || fail "$1: status $(header :status "$log"), want $2"
  [[ "$(header content-encoding "$log")" == "$3" ]] ||
    fail "$1: content-encoding '$(header content-encoding "$log")', want '$3'"
  [[ "$(header vary "$log")" == "$4" ]] || fail "$1: vary '$(header vary "$log")', want '$4'"
}

# Below the threshold: identity, and the response does not vary.
get small /small.txt gzip
expect small 200 "" ""
cmp -s "$WORK/small.out" "$ROOT/small.txt" || fail "small: body differs"

# gzip: nghttp inflates it; the wire carries the compressed length.
get gzip /page.html gzip
expect gzip 200 gzip accept-encoding
cmp -s "$WORK/gzip.out" "$ROOT/page.html" || fail "gzip: inflated body differs"
length="$(header content-length "$WORK/gzip.log")"
((length > 0 && length < 65536 / 10)) || fail "gzip: content-length $length"
# The same bytes through curl, raw, decoded by gzip(1).
C -H 'accept-encoding: gzip' -D "$WORK/curl_gzip.h" -o "$WORK/curl_gzip.gz" "$BASE/page.html" ||
  fail "curl gzip: exit $?"
[[ "$(stat -c %s "$WORK/curl_gzip.gz")" == "$length" ]] || fail "curl gzip: length"
"$GZIP" -dc "$WORK/curl_gzip.gz" | cmp -s - "$ROOT/page.html" || fail "gzip -dc differs"

# zstd: nghttp writes it as received.
get zstd /page.html zstd
expect zstd 200 zstd accept-encoding
"$ZSTD" -dcq "$WORK/zstd.out" | cmp -s - "$ROOT/page.html" || fail "zstd -dc differs"

# A browser's value: zstd, the server's first preference.
get chrome /page.html 'gzip, deflate, br, zstd'
expect chrome 200 zstd accept-encoding
"$ZSTD" -dcq "$WORK/chrome.out" | cmp -s - "$ROOT/page.html" || fail "chrome: zstd -dc differs"
# Safari's: no zstd, so gzip.
get safari /page.html 'gzip, deflate, br'
expect safari 200 gzip accept-encoding
cmp -s "$WORK/safari.out" "$ROOT/page.html" || fail "safari: body differs"

# curl --compressed sends "deflate, gzip, br, zstd" and decodes the answer.
C --compressed -D "$WORK/curl.h" -o "$WORK/curl.out" "$BASE/page.html" || fail "curl: exit $?"
grep -qi '^content-encoding: zstd' "$WORK/curl.h" || fail "curl --compressed: not zstd"
grep -qi '^vary: accept-encoding' "$WORK/curl.h" || fail "curl --compressed: no vary"
cmp -s "$WORK/curl.out" "$ROOT/page.html" || fail "curl --compressed: body differs"

# identity: identity, varying.
get ident /page.html identity
expect ident 200 "" accept-encoding
[[ "$(header content-length "$WORK/ident.log")" == 65536 ]] || fail "identity: length"
cmp -s "$WORK/ident.out" "$ROOT/page.html" || fail "identity: body differs"
# No header (nghttp always sends one; curl without --compressed does not).
C -D "$WORK/bare.h" -o "$WORK/bare.out" "$BASE/page.html" || fail "curl: exit $?"
grep -qi '^content-encoding' "$WORK/bare.h" && fail "no header: content-encoding"
grep -qi '^vary: accept-encoding' "$WORK/bare.h" || fail "no header: no vary"
cmp -s "$WORK/bare.out" "$ROOT/page.html" || fail "no header: body differs"

# q=0 excludes a coding.
get noq /page.html 'gzip;q=0'
expect noq 200 "" accept-encoding
cmp -s "$WORK/noq.out" "$ROOT/page.html" || fail "gzip;q=0: body differs"
get noq2 /page.html 'gzip;q=0, deflate'
expect noq2 200 deflate accept-encoding
cmp -s "$WORK/noq2.out" "$ROOT/page.html" || fail "gzip;q=0, deflate: body differs"
get weights /page.html 'zstd;q=0.5, gzip;q=0.8'
expect weights 200 gzip accept-encoding

# Nothing acceptable: 406.
get none /page.html 'identity;q=0'
expect none 406 "" ""
get star /page.html '*;q=0'
expect star 406 "" ""

# HEAD: the GET's headers, no body.
N -v -H ':method: HEAD' -H 'accept-encoding: gzip' "$BASE/page.html" >"$WORK/head.log" 2>&1 ||
  fail "HEAD: exit $?"
expect head 200 gzip accept-encoding
[[ "$(header content-length "$WORK/head.log")" == "$length" ]] || fail "HEAD: content-length"
grep -q 'recv DATA' "$WORK/head.log" && fail "HEAD sent DATA"

# Above the small-file cache (2 MiB): compressed whole, once per encoding.
get large /large.txt zstd
expect large 200 zstd accept-encoding
"$ZSTD" -dcq "$WORK/large.out" | cmp -s - "$ROOT/large.txt" || fail "large: zstd -dc differs"
get large_id /large.txt identity
expect large_id 200 "" accept-encoding
cmp -s "$WORK/large_id.out" "$ROOT/large.txt" || fail "large identity: body differs"

# Above --compress_max_bytes (3 MiB + 1 here): identity, not varying.
text 1 >>"$ROOT/capped.txt"
get capped /capped.txt gzip
expect capped 200 "" ""
cmp -s "$WORK/capped.out" "$ROOT/capped.txt" || fail "capped: body differs"

# Incompressible: identity, varying.
get noise /noise.bin gzip
expect noise 200 "" accept-encoding
cmp -s "$WORK/noise.out" "$ROOT/noise.bin" || fail "noise: body differs"

# A changed file is compressed again (cache keyed by size and mtime).
get before /page.html zstd
text 70000 | tr a-z A-Z >"$ROOT/page.html"
sleep 1.2  # The cache revalidates with stat() at most once a second.
get after /page.html zstd
expect after 200 zstd accept-encoding
"$ZSTD" -dcq "$WORK/after.out" | cmp -s - "$ROOT/page.html" || fail "changed file: stale body"

kill -0 "$SERVER_PID" 2>/dev/null || fail "server died"

# A server preferring gzip, and compressing from 100 octets on.
cleanup
SERVER_PID=""
start_server "$SERVER" --root="$ROOT" --encodings=gzip,zstd --compress_min_bytes=100
BASE="http://127.0.0.1:$SERVER_PORT"
get custom /page.html 'gzip, deflate, br, zstd'
expect custom 200 gzip accept-encoding
cmp -s "$WORK/custom.out" "$ROOT/page.html" || fail "custom: body differs"
get custom_deflate /page.html deflate
expect custom_deflate 200 "" accept-encoding
get custom_small /small.txt zstd
expect custom_small 200 zstd accept-encoding
"$ZSTD" -dcq "$WORK/custom_small.out" | cmp -s - "$ROOT/small.txt" || fail "custom small: zstd -dc differs"

# An unknown name in --encodings is refused.
"$SERVER" --root="$ROOT" --encodings=gzip,br >/dev/null 2>&1 && fail "--encodings=br accepted"

finish
