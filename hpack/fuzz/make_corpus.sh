#!/bin/bash
# Regenerates hpack/fuzz/corpus/ from the vendored hpack-test-case stories:
# every implementation's stories as they are, and raw-data encoded by our
# encoder with a 256-octet table (evictions, a size update), each cut to at most
# 4 KiB of cases; byte-identical seeds are kept once. regress_* files stay.
set -euo pipefail
cd "$(dirname "$0")/../.."
./bazelw build //hpack/tool:hpack_tool
tool=bazel-bin/hpack/tool/hpack_tool
stories=third_party/hpack_test_case
out=hpack/fuzz/corpus
# Regenerate the story seeds; keep regress_* (inputs that once failed).
mkdir -p "$out"
find "$out" -type f ! -name 'regress_*' -delete
"$tool" seeds --out "$out" --max-bytes 4096 \
  "$stories"/{go-hpack,haskell-http2-linear-huffman,haskell-http2-naive,nghttp2,nghttp2-change-table-size,python-hpack}/story_*.json >/dev/null
"$tool" seeds --out "$out" --max-bytes 4096 --table-size 256 "$stories"/raw-data/story_*.json >/dev/null
# Drop duplicates (keeping the first name in sort order).
declare -A seen
for f in $(ls "$out" | sort); do
  sum=$(md5sum <"$out/$f" | cut -d' ' -f1)
  if [ -n "${seen[$sum]:-}" ]; then rm "$out/$f"; else seen[$sum]=1; fi
done
echo "$(ls "$out" | wc -l) seeds, $(du -sh "$out" | cut -f1)"
