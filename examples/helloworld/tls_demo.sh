#!/usr/bin/env bash
# A client reaching the Greeter by a dns:/// name over mutual TLS, with
# certificates made here by the openssl command (a CA, a server certificate
# for localhost, a client certificate):
#
#   greeter_server --address=localhost:0 --tls_cert=server.pem \
#       --tls_key=server.key --tls_client_ca=ca.pem
#   greeter_client --target=dns:///localhost:PORT --tls_ca=ca.pem \
#       --tls_cert=client.pem --tls_key=client.key
#
# Usage: tls_demo.sh [SERVER CLIENT] (bazel run passes both).
set -euo pipefail
server_bin=$(realpath "${1:-bazel-bin/examples/helloworld/greeter_server}")
client_bin=$(realpath "${2:-bazel-bin/examples/helloworld/greeter_client}")
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tls_demo.XXXXXX")
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" || true
  rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"

# CA, then a server (localhost) and a client certificate signed by it.
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj "/CN=demo CA" 2>/dev/null
issue() {  # NAME SUBJECT EXTENSIONS
  openssl req -new $ec -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial \
    -days 2 -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
issue server /CN=localhost "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
issue client /CN=demo-client "extendedKeyUsage=clientAuth"

"$server_bin" --address=localhost:0 --tls_cert=server.pem --tls_key=server.key \
  --tls_client_ca=ca.pem >server.out 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q "^Server listening on" server.out && break
  sleep 0.1
done
port=$(sed -n 's/^Server listening on .*:\([0-9]*\)$/\1/p' server.out)
[[ -n $port ]] || { cat server.out; echo "server did not start" >&2; exit 1; }
echo "server: $(head -1 server.out) (TLS, client certificates required)"

target="dns:///localhost:$port"
echo "client: --target=$target --tls_ca=ca.pem --tls_cert=client.pem"
"$client_bin" --target="$target" --tls_ca=ca.pem --tls_cert=client.pem \
  --tls_key=client.key --name="TLS over $target"
echo "client without its certificate (the server requires one):"
if "$client_bin" --target="$target" --tls_ca=ca.pem --name=anonymous \
  2>client.err; then
  echo "unexpected success" >&2
  exit 1
fi
cat client.err
grep -q "UNAVAILABLE: .*certificate required" client.err
