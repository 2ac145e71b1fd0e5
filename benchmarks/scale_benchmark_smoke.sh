#!/bin/sh
# Smoke test of //benchmarks:scale_benchmark: a tiny configuration, both
# servers. $1 is the binary; the rest are its flags.
set -eu
exec "$@" --conns=50 --reps=1 --sync_streams=8 --callback_calls=20 --idle_ms=100
