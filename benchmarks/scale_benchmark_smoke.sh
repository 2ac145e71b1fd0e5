#!/bin/sh
# Smoke test of //benchmarks:scale_benchmark: a tiny configuration, both
# servers, every table row (the held calls' too). $1 is the binary; the rest
# are its flags.
set -eu
out="${TEST_TMPDIR:-/tmp}/scale_benchmark_smoke.out"
"$@" --conns=50 --reps=1 --sync_streams=8 --callback_calls=20 --idle_ms=100 \
  --held_calls=40 --held_conns=4 | tee "$out"
fail() {
  echo "scale_benchmark_smoke: $1" >&2
  exit 1
}
for row in '| server RSS per idle connection, KiB |' \
  '| threads after 20 callback unary calls |' \
  '| held calls (idle, server) | ours RSS KiB/call | grpc++ RSS KiB/call |' \
  '| unary, 40 on 1 connection |' '| unary, 40 on 4 connections |' \
  '| server streaming, 40 on 1 connection |' \
  '| server streaming, 40 on 4 connections |'; do
  grep -qF -- "$row" "$out" || fail "no '$row' in the output"
done
# Both stacks hold both kinds of call: every held row has numbers in its RSS
# cells. (The heap cells are 0 under ASan, whose allocator mallinfo2 does not
# see.)
[ "$(grep -cE \
  '^\| (unary|server streaming), 40 on [0-9]+ connections? \| [0-9.]+ \| [0-9.]+ \|' \
  "$out")" = 4 ] || fail "a held row without numbers"
