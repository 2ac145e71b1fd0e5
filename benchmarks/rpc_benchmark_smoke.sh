#!/bin/sh
# Smoke test of //benchmarks:rpc_benchmark: a tiny configuration, both stacks.
# $1 is the binary; the rest are its flags.
set -eu
exec "$@" --duration=0.2 --reps=1
