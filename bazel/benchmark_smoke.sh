#!/bin/bash
# Runs a Google Benchmark binary for one short iteration of each benchmark: a smoke
# test that it builds, starts and finishes. Timing numbers from here mean nothing.
set -euo pipefail
binary=$1
shift
out=$("$binary" --benchmark_min_time=0 "$@" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
# Each benchmark prints one row; fail if none ran (a filter or registration mistake).
grep -qE '^[A-Za-z_][^ ]* +[0-9.]+ [mnu]?s ' <<<"$out" || { echo "no benchmark ran"; exit 1; }
