#!/bin/bash
# Debian's h2load hammering our //examples:http2_server: 2000 requests over 4
# connections, 10 streams each (h2c), then the same over TLS; every request
# must succeed.
# Usage: h2load_test.sh PATH_TO_http2_server

source "$(dirname "$0")/peer_lib.sh"
check_tools "$H2LOAD" "$OPENSSL"

SERVER="$1"
ROOT="$WORK/root"
mkdir -p "$ROOT"
printf 'hello, world!\n' >"$ROOT/index.html"
make_cert "$WORK"

run_h2load() {  # URL LABEL
  timeout 40 "$H2LOAD" -n 2000 -c 4 -m 10 "$1" >"$WORK/h2load.$2" 2>&1 ||
    fail "$2: h2load exit $?"
  grep -q 'requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout' \
    "$WORK/h2load.$2" || { fail "$2: not all succeeded"; cat "$WORK/h2load.$2" >&2; }
  grep -q 'status codes: 2000 2xx' "$WORK/h2load.$2" || fail "$2: status codes"
  grep -E 'finished in|requests:' "$WORK/h2load.$2"
}

start_server "$SERVER" --root="$ROOT" --threads=2
run_h2load "http://127.0.0.1:$SERVER_PORT/index.html" h2c
cleanup
SERVER_PID=""

start_server "$SERVER" --root="$ROOT" --threads=2 \
  --tls_cert="$WORK/cert.pem" --tls_key="$WORK/key.pem"
run_h2load "https://127.0.0.1:$SERVER_PORT/index.html" tls

finish
