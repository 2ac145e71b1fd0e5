#!/bin/bash
# hpack_tool end to end over the vendored hpack-test-case corpus:
#   hpack_tool_test.sh TOOL TOOL_NGHTTP2 --encoded STORY... --raw STORY...
set -euo pipefail

tool=$1
tool_nghttp2=$2
shift 2
encoded=()
raw=()
list=none
for arg in "$@"; do
  case "$arg" in
    --encoded) list=encoded ;;
    --raw) list=raw ;;
    *) if [ "$list" = encoded ]; then encoded+=("$arg"); else raw+=("$arg"); fi ;;
  esac
done
[ ${#encoded[@]} -gt 100 ] || { echo "expected every implementation's stories"; exit 1; }
[ ${#raw[@]} -gt 10 ] || { echo "expected the raw-data stories"; exit 1; }
tmp=${TEST_TMPDIR:-$(mktemp -d)}

fail() {
  echo "FAILED: $*"
  exit 1
}

# 1. Every case of every implementation's stories decodes to its headers.
"$tool" verify "${encoded[@]}" >"$tmp/verify.out" || { cat "$tmp/verify.out"; fail verify; }
[ "$(grep -c '^ok  ' "$tmp/verify.out")" -eq ${#encoded[@]} ] || fail "verify: not one ok line per file"

# 2. Our encoder's stories at several table sizes verify with our decoder.
for size in 0 256 4096 16384; do
  out="$tmp/encoded_$size"
  "$tool" encode --table-size "$size" --out "$out" "${raw[@]}" >/dev/null || fail "encode $size"
  "$tool" verify "$out"/*.json >"$tmp/verify_$size.out" ||
    { cat "$tmp/verify_$size.out"; fail "verify of our encoding at $size"; }
  grep -q "\"header_table_size\": $size" "$out/story_00.json" || fail "header_table_size $size"
done

# 3. A deliberately wrong header is caught, with the case number, and exits 1.
sed '0,/":method": "GET"/s/":method": "GET"/":method": "PUT"/' \
  "$tmp/encoded_4096/story_00.json" >"$tmp/wrong.json"
if "$tool" verify "$tmp/wrong.json" >"$tmp/wrong.out"; then fail "verify accepted a wrong header"; fi
grep -q '^FAIL .*wrong.json: case 0 (seqno 0): header 0: expected ":method: PUT", got ":method: GET"' \
  "$tmp/wrong.out" || { cat "$tmp/wrong.out"; fail "mismatch message"; }

# 4. The ratio table over raw-data.
"$tool" ratio "${raw[@]}" >"$tmp/ratio.out" || { cat "$tmp/ratio.out"; fail ratio; }
cat "$tmp/ratio.out"
grep -q '^requests: ' "$tmp/ratio.out" || fail "ratio: no requests section"
grep -q '^responses: ' "$tmp/ratio.out" || fail "ratio: no responses section"
[ "$(grep -cE '^ +(256|4096|16384) +[0-9,]+ +0\.[0-9]{3} ' "$tmp/ratio.out")" -eq 6 ] ||
  fail "ratio: expected 3 table sizes x 2 directions"

# 5. With nghttp2 beside ours (its inflater also decodes every block of ours): two more
# columns, and ours is the smaller at every table size and direction. (Asserted against
# the libnghttp2 the build links, Debian bookworm's 1.52.0: another version's deflater
# may compress differently.)
"$tool_nghttp2" ratio "${raw[@]}" >"$tmp/ratio_nghttp2.out" ||
  { cat "$tmp/ratio_nghttp2.out"; fail "ratio with nghttp2"; }
cat "$tmp/ratio_nghttp2.out"
grep -q '^HPACK (h2rpc encoder, nghttp2 [0-9.]* deflater beside it)' "$tmp/ratio_nghttp2.out" ||
  fail "ratio with nghttp2: title"
[ "$(grep -c 'nghttp2 octets  vs nghttp2$' "$tmp/ratio_nghttp2.out")" -eq 2 ] ||
  fail "ratio with nghttp2: column titles"
rows=$(grep -E '^ +(256|4096|16384) +[0-9,]+ +0\.[0-9]{3} ' "$tmp/ratio_nghttp2.out" || true)
[ "$(echo "$rows" | grep -c .)" -eq 6 ] || fail "ratio with nghttp2: expected 6 rows"
# Every row has its 9 columns, the last a ratio (an empty one is no pass).
[ "$(echo "$rows" | awk 'NF == 9 && $9 ~ /^[0-9]+\.[0-9][0-9][0-9]$/ && $9 < 1' | wc -l)" -eq 6 ] ||
  fail "ratio with nghttp2: ours not smaller everywhere"
grep -q 'nghttp2' "$tmp/ratio.out" && fail "hpack_tool itself has no nghttp2 column"
grep -q 'story wire' "$tmp/ratio.out" && fail "raw-data has no wire to show"
# Stories with wire (nghttp2's, at 4096, whose headers are raw-data's) add their own
# blocks' octets at 4096, "-" at the other sizes: nghttp2's published totals.
wire=()
for f in "${encoded[@]}"; do
  case "$f" in */nghttp2/story_*.json) wire+=("$f") ;; esac
done
[ ${#wire[@]} -eq 32 ] || fail "expected nghttp2's 32 stories, got ${#wire[@]}"
"$tool" ratio "${wire[@]}" >"$tmp/ratio_wire.out" || { cat "$tmp/ratio_wire.out"; fail "ratio with wire"; }
[ "$(grep -c 'std dev    story wire$' "$tmp/ratio_wire.out")" -eq 2 ] || fail "ratio: story wire title"
[ "$(grep -cE '^ +4096 .* 20,953$' "$tmp/ratio_wire.out")" -eq 1 ] || fail "ratio: requests' story wire at 4096"
[ "$(grep -cE '^ +4096 .* 339,366$' "$tmp/ratio_wire.out")" -eq 1 ] || fail "ratio: responses' story wire at 4096"
[ "$(grep -cE '^ +(256|16384) .* -$' "$tmp/ratio_wire.out")" -eq 4 ] || fail "ratio: no story wire elsewhere"

# 6. Usage errors exit 2.
set +e
"$tool" bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown command should exit 2"
"$tool" encode "${raw[0]}" >/dev/null 2>&1
[ $? -eq 2 ] || fail "encode without --out should exit 2"
set -e
echo PASS
