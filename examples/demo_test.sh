#!/bin/bash
# The README's demo runs, every block decodes back, and the corpus table prints.
set -euo pipefail
out=$("$1")
echo "$out"
grep -q "decodes back: ok" <<<"$out"
! grep -q "MISMATCH" <<<"$out"
grep -q "raw-data" <<<"$out"
