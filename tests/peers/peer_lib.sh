#!/bin/bash
# Shared by the real-peer shell tests: start //examples:http2_server on a
# loopback port picked by the kernel, wait (bounded) for its port, kill it at
# exit. Peers are Debian's binaries, called by absolute path (Bazel runs tests
# with a restricted PATH).

set -u

NGHTTP=/usr/bin/nghttp
H2LOAD=/usr/bin/h2load
OPENSSL=/usr/bin/openssl
WORK="${TEST_TMPDIR:-$(mktemp -d)}"
SERVER_PID=""
SERVER_PORT=""
FAILURES=0

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

fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}

check_tools() {
  for tool in "$@"; do
    if [[ ! -x "$tool" ]]; then
      echo "missing $tool (Debian packages nghttp2-client, openssl)" >&2
      exit 1
    fi
  done
}

# start_server BINARY ARGS...: sets SERVER_PID and SERVER_PORT.
start_server() {
  local binary="$1"
  shift
  "$binary" "$@" >"$WORK/server.out" 2>"$WORK/server.err" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    SERVER_PORT="$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$WORK/server.out")"
    [[ -n "$SERVER_PORT" ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server did not start:" >&2
  cat "$WORK/server.out" "$WORK/server.err" >&2
  exit 1
}

# make_cert DIR: a self-signed certificate for localhost / 127.0.0.1.
make_cert() {
  "$OPENSSL" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$1/key.pem" -out "$1/cert.pem" -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>"$1/openssl.err" ||
    { cat "$1/openssl.err" >&2; exit 1; }
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

finish() {
  if [[ -n "$SERVER_PID" ]] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
    fail "server died"
    cat "$WORK/server.err" >&2
  fi
  if ((FAILURES > 0)); then
    echo "$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo PASS
}
