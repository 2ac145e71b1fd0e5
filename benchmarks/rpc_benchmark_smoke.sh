#!/bin/sh
# Smoke test of //benchmarks:rpc_benchmark: a tiny configuration, every row
# (both stacks, the callback rows with (a) to (c), the busy-poll row, both
# floors), a two-point sweep on one and two channels, two repetitions (so
# each stack goes first once), --json.
# $1 is the binary; the rest are its flags.
set -eu
json="${TEST_TMPDIR:-/tmp}/rpc_benchmark_smoke.json"
out="${TEST_TMPDIR:-/tmp}/rpc_benchmark_smoke.out"
"$@" --duration=0.1 --reps=2 --sweep=1,8 --sweep_channels=1,2 \
  --json="$json" | tee "$out"
fail() {
  echo "rpc_benchmark_smoke: $1" >&2
  exit 1
}
for row in '| ours |' '| grpc++ |' '| ours / grpc++ |' \
  '| floor (blocking) |' '| floor (spinning) |' \
  '| ours, callback server |' '| grpc++, callback server |' \
  '| ours / grpc++, callback server |' \
  '| ours, callback server and client |' \
  '| grpc++, callback server and client |' \
  '| ours / grpc++, callback server and client |' \
  '| ours, busy-poll |' '| ours busy-poll / grpc++ |' \
  '(a) client cs/call' '(a) server cs/call' '(a) CPU us/call |' \
  '(d) identity client cs/call' \
  '(a) against the blocking floor: ours calls/s ' \
  '| sweep: in flight | channels | ours calls/s | grpc++ calls/s |' \
  '| 1 | 1 |' '| 8 | 1 |' '| 1 | 2 |' '| 8 | 2 |'; do
  grep -qF -- "$row" "$out" || fail "no '$row' in the output"
done
# The callback rows run (a) to (c) on both stacks: no cell left empty.
if grep -E '^\| (ours|grpc\+\+)( / grpc\+\+)?, callback ' "$out" |
  grep -qF -- '| - |'; then
  fail "a callback row without numbers"
fi
# No sweep cell left empty: every point has both stacks' numbers.
if grep -E '^\| [0-9]+ \| [0-9]+ \|' "$out" | grep -qF -- '| - |'; then
  fail "a sweep point without numbers"
fi
for key in '"ours": {' '"grpc": {' '"floor_blocking": {' '"floor_spinning": {' \
  '"ours_callback_server": {' '"grpc_callback_server": {' \
  '"ours_callback": {' '"grpc_callback": {' '"ours_busy_poll": {' \
  '"a_client_cs_per_call":' '"a_server_cs_per_call":' '"a_cpu_us_per_call":' \
  '"d_diff_cpu_us_per_call":' '"sweep_c1_ch1_calls_per_s":' \
  '"sweep_c8_ch2_p99_us":' '"sweep_c8_ch2_cpu_us_per_call":' \
  '"sweep_channels": [1,2]'; do
  grep -qF -- "$key" "$json" || fail "no '$key' in $json"
done
