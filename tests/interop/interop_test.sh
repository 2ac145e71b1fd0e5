#!/bin/bash
# Runs grpc's interop cases with CLIENT against SERVER, each case a separate
# client invocation so that a failure names its case.
#   interop_test.sh SERVER CLIENT [--server_flag FLAG | --client_flag FLAG]...
#       [--use_tls MAKE_TEST_CERTS] CASE...
# The server starts on a port the kernel picks (--port=0), every wait is
# bounded, and the server is killed at the end. With --use_tls,
# MAKE_TEST_CERTS writes a test CA and a localhost server certificate that
# the server serves and the client trusts (--ca_file). --server_flag and
# --client_flag pass one more flag to the server or to every client run
# (--callback: that side on the callback API).

set -u

SERVER="$1"
CLIENT="$2"
shift 2
SERVER_FLAGS=()
CLIENT_FLAGS=()
while [[ "${1:-}" == "--server_flag" || "${1:-}" == "--client_flag" ]]; do
  if [[ "$1" == "--server_flag" ]]; then
    SERVER_FLAGS+=("$2")
  else
    CLIENT_FLAGS+=("$2")
  fi
  shift 2
done
TLS_SERVER_ARGS=()
TLS_CLIENT_ARGS=()
WORK="${TEST_TMPDIR:-$(mktemp -d)}"
if [[ "${1:-}" == "--use_tls" ]]; then
  CERTS="$WORK/certs"
  mkdir -p "$CERTS"
  "$2" "$CERTS" || { echo "cannot make test certificates" >&2; exit 1; }
  shift 2
  TLS_SERVER_ARGS=(--use_tls "--tls_cert=$CERTS/server.pem" "--tls_key=$CERTS/server.key")
  TLS_CLIENT_ARGS=(--use_tls "--ca_file=$CERTS/ca.pem" --server_host_override=localhost)
fi

SERVER_PID=""

cleanup() {
  if [[ -n "$SERVER_PID" ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
}
trap cleanup EXIT

"$SERVER" --port=0 "${SERVER_FLAGS[@]}" "${TLS_SERVER_ARGS[@]}" >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
PORT=""
for _ in $(seq 100); do
  PORT="$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$WORK/server.out")"
  [[ -n "$PORT" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [[ -z "$PORT" ]]; then
  echo "server did not start:" >&2
  cat "$WORK/server.out" "$WORK/server.err" >&2
  exit 1
fi

FAILED=()
for test_case in "$@"; do
  if timeout 30 "$CLIENT" --server_host=127.0.0.1 --server_port="$PORT" \
      "--test_case=$test_case" "${CLIENT_FLAGS[@]}" "${TLS_CLIENT_ARGS[@]}"; then
    echo "PASS $test_case"
  else
    echo "FAIL $test_case" >&2
    FAILED+=("$test_case")
  fi
done
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "server died:" >&2
  cat "$WORK/server.err" >&2
  exit 1
fi
if [[ ${#FAILED[@]} -gt 0 ]]; then
  echo "failed cases: ${FAILED[*]}" >&2
  exit 1
fi
echo "all ${#} cases passed"
