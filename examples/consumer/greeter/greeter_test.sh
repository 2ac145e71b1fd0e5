#!/usr/bin/env bash
# Starts greeter_server on a free loopback port, calls it with greeter_client
# (an answer, then INVALID_ARGUMENT for an empty name) and stops it.
# Usage: greeter_test.sh SERVER CLIENT (the BUILD file passes both).
set -euo pipefail
server=$1
client=$2
out=$(mktemp "${TEST_TMPDIR:-/tmp}/server.XXXXXX")
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" || true
  fi
}
trap cleanup EXIT

"$server" >"$out" 2>&1 &
server_pid=$!
address=
for _ in $(seq 300); do  # Up to 30 s for the first line.
  address=$(sed -n 's/^listening on //p' "$out")
  [[ -n $address ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $address ]] || { cat "$out"; echo "server did not start" >&2; exit 1; }

reply=$("$client" "$address" consumer)
[[ $reply == "Hello consumer" ]] || { echo "unexpected reply: $reply" >&2; exit 1; }
echo "client <- $reply"

if "$client" "$address" "" 2>"$TEST_TMPDIR/client.err"; then
  echo "an empty name succeeded" >&2
  exit 1
fi
grep -q INVALID_ARGUMENT "$TEST_TMPDIR/client.err" ||
  { cat "$TEST_TMPDIR/client.err"; exit 1; }
echo "client <- $(cat "$TEST_TMPDIR/client.err")"
