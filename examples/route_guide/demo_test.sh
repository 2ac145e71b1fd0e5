#!/usr/bin/env bash
# Runs the route_guide demo (it exits non-zero when a call fails).
set -euo pipefail
out=$("$1")
echo "$out"
grep -q 'all calls succeeded' <<<"$out"
