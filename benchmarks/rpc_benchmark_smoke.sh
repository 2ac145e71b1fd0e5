#!/bin/sh
# Smoke test of //benchmarks:rpc_benchmark: a tiny configuration, both stacks
# and both floors, two repetitions (so each stack goes first once), --json.
# $1 is the binary; the rest are its flags.
set -eu
json="${TEST_TMPDIR:-/tmp}/rpc_benchmark_smoke.json"
out="${TEST_TMPDIR:-/tmp}/rpc_benchmark_smoke.out"
"$@" --duration=0.2 --reps=2 --json="$json" | tee "$out"
fail() {
  echo "rpc_benchmark_smoke: $1" >&2
  exit 1
}
for row in '| ours |' '| grpc++ |' '| floor (blocking) |' '| floor (spinning) |' \
  '(a) client cs/call' '(a) server cs/call' '(d) identity client cs/call' \
  '(a) against the blocking floor: ours calls/s '; do
  grep -qF -- "$row" "$out" || fail "no '$row' in the output"
done
for key in '"ours": {' '"grpc": {' '"floor_blocking": {' '"floor_spinning": {' \
  '"a_client_cs_per_call":' '"a_server_cs_per_call":' '"d_diff_cpu_us_per_call":'; do
  grep -qF -- "$key" "$json" || fail "no '$key' in $json"
done
