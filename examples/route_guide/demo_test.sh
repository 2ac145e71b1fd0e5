#!/usr/bin/env bash
# Runs the route_guide demo (it exits non-zero when a call fails), with the
# blocking server and with the callback server.
set -euo pipefail
for flags in "" "--callback_server"; do
  out=$("$1" $flags)
  echo "$out"
  grep -q 'all calls succeeded' <<<"$out"
done
