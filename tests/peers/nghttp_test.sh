#!/bin/bash
# Debian's nghttp client against our //examples:http2_server, over h2c (prior
# knowledge) and TLS (ALPN h2, a certificate made here): a small file, an
# 8 MiB file (checksum), an upload echoed back through /echo (checksum), 100
# concurrent streams, HEAD, 404 and a refused "..".
# Usage: nghttp_test.sh PATH_TO_http2_server h2c|tls

source "$(dirname "$0")/peer_lib.sh"
check_tools "$NGHTTP" "$OPENSSL"

SERVER="$1"
MODE="$2"
ROOT="$WORK/root"
mkdir -p "$ROOT/sub"
printf 'hello, world!\n' >"$ROOT/index.html"
printf 'body { }\n' >"$ROOT/sub/style.css"
head -c $((8 << 20)) /dev/urandom >"$ROOT/big.bin"
head -c $((3 << 20)) /dev/urandom >"$WORK/upload.bin"

if [[ "$MODE" == tls ]]; then
  make_cert "$WORK"
  start_server "$SERVER" --root="$ROOT" --threads=2 \
    --tls_cert="$WORK/cert.pem" --tls_key="$WORK/key.pem"
  BASE="https://127.0.0.1:$SERVER_PORT"
else
  start_server "$SERVER" --root="$ROOT" --threads=2
  BASE="http://127.0.0.1:$SERVER_PORT"
fi
N() { timeout 30 "$NGHTTP" "$@"; }

# A small file, verbose: the frames of a real exchange.
N -v "$BASE/index.html" >"$WORK/small.log" 2>&1 || fail "GET /index.html: exit $?"
grep -q ':status: 200' "$WORK/small.log" || fail "no :status 200"
grep -q 'hello, world!' "$WORK/small.log" || fail "small body missing"
grep -q 'content-type: text/html' "$WORK/small.log" || fail "content-type"
if [[ "$MODE" == tls ]]; then
  grep -q 'The negotiated protocol: h2' "$WORK/small.log" ||
    fail "ALPN h2 not reported"
fi

# 8 MiB: flow control and window updates over many frames.
N "$BASE/big.bin" >"$WORK/big.out" 2>"$WORK/big.err" || fail "GET /big.bin: exit $?"
[[ "$(sha "$WORK/big.out")" == "$(sha "$ROOT/big.bin")" ]] ||
  fail "big.bin differs ($(stat -c %s "$WORK/big.out") octets)"

# Upload 3 MiB to /echo: the body comes back, streamed.
N -d "$WORK/upload.bin" "$BASE/echo" >"$WORK/echo.out" 2>"$WORK/echo.err" ||
  fail "POST /echo: exit $?"
[[ "$(sha "$WORK/echo.out")" == "$(sha "$WORK/upload.bin")" ]] ||
  fail "echo differs ($(stat -c %s "$WORK/echo.out") octets)"

# 100 concurrent streams on one connection (-m repeats the URI).
N -n -s -m 100 "$BASE/index.html" >"$WORK/many.log" 2>&1 ||
  fail "100 streams: exit $?"
# The statistics list one line per stream: "id ... code size path".
[[ "$(grep -cE '^ *[0-9]+ .* 200 +14 /index.html$' "$WORK/many.log")" -eq 100 ]] ||
  { fail "100 streams: not 100 OK responses"; cat "$WORK/many.log" >&2; }

# Several different URIs at once, one of them large.
N -n -v "$BASE/index.html" "$BASE/sub/style.css" "$BASE/big.bin" \
  "$BASE/missing" >"$WORK/multi.log" 2>&1 || fail "multi: exit $?"
[[ "$(grep -c ':status: 200' "$WORK/multi.log")" -eq 3 ]] || fail "multi: 3x 200"
grep -q ':status: 404' "$WORK/multi.log" || fail "multi: 404"

# HEAD: headers (content-length of the file), no body.
N -v -H ':method: HEAD' "$BASE/big.bin" >"$WORK/head.log" 2>&1 || fail "HEAD: exit $?"
grep -q "content-length: $((8 << 20))" "$WORK/head.log" || fail "HEAD content-length"
grep -q 'recv DATA' "$WORK/head.log" && fail "HEAD sent DATA"

# Path traversal is refused.
N -v "$BASE/sub/../../etc/passwd" >"$WORK/dotdot.log" 2>&1
grep -q ':status: 400\|:status: 404' "$WORK/dotdot.log" || fail "'..' not refused"
grep -q 'root:' "$WORK/dotdot.log" && fail "'..' escaped the root"

finish
