#!/usr/bin/env bash
# Runs the helloworld demo and checks what it printed.
set -euo pipefail
out=$("$1")
echo "$out"
grep -q 'client <- "Hello world"' <<<"$out"
grep -q 'trailing x-request-id: 42' <<<"$out"
grep -q 'INVALID_ARGUMENT: name must not be empty' <<<"$out"
