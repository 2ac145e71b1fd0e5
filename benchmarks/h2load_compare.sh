#!/bin/bash
# h2load against three HTTP/2 servers in the same run, one worker thread each,
# serving the same 15-octet file over h2c (prior knowledge):
#   ours     //examples:http2_server --threads=1   (built with --config=bench)
#   nghttpd  Debian's nghttp2-server, -n 1
#   h2o      Debian's h2o, num-threads: 1 (installed with apt-get if missing)
# Two load shapes: many connections (h2load -c 32 -m 10) and one connection
# with many streams (h2load -c 1 -m 32). For each: requests per second, and
# server CPU per request (utime + stime of the server process, all threads,
# from /proc/PID/stat before and after, divided by the requests), each with
# its ratio to h2o. Every cell is the median of REPS runs.
#
# Usage: benchmarks/h2load_compare.sh [-n REQUESTS] [-r REPS] [--no-pin]
#   run from the repository root. Not a test: numbers depend on the machine.
# By default the server runs on CPU 0 and h2load on CPU 1 (taskset), so the
# two do not compete for one core.

set -euo pipefail

N=100000
REPS=3
PIN=1
while (($#)); do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    -r) REPS="$2"; shift 2 ;;
    --no-pin) PIN=0; shift ;;
    *) echo "usage: $0 [-n REQUESTS] [-r REPS] [--no-pin]" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.."
H2LOAD=/usr/bin/h2load
NGHTTPD=/usr/sbin/nghttpd
H2O=/usr/bin/h2o
for tool in "$H2LOAD" "$NGHTTPD"; do
  [[ -x "$tool" ]] || { echo "missing $tool (nghttp2-client, nghttp2-server)" >&2; exit 1; }
done
if [[ ! -x "$H2O" ]]; then
  echo "h2o missing: apt-get install -y h2o" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y h2o >/dev/null
fi

./bazelw build --config=bench //examples:http2_server >/dev/null 2>&1 ||
  { echo "build failed: ./bazelw build --config=bench //examples:http2_server" >&2; exit 1; }
OURS="$(./bazelw info --config=bench bazel-bin 2>/dev/null)/examples/http2_server"
[[ -x "$OURS" ]] || { echo "no $OURS" >&2; exit 1; }

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/root"
chmod 755 "$WORK" "$WORK/root"  # h2o started as root serves as nobody
printf 'hello, world!!\n' >"$WORK/root/index.html"  # 15 octets
chmod 644 "$WORK/root/index.html"
TICKS="$(getconf CLK_TCK)"
SERVER_CPU=()
LOAD_CPU=()
if ((PIN)) && command -v taskset >/dev/null && (($(nproc) >= 2)); then
  SERVER_CPU=(taskset -c 0)
  LOAD_CPU=(taskset -c 1)
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {  # PORT: bounded wait until it accepts connections
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "server on port $1 did not come up" >&2
  return 1
}

cpu_ticks() {  # PID: utime + stime
  awk '{print $14 + $15}' "/proc/$1/stat"
}

start_server() {  # NAME: sets SERVER_PID and PORT
  PORT="$(free_port)"
  case "$1" in
    ours)
      "${SERVER_CPU[@]}" "$OURS" --root="$WORK/root" --port="$PORT" --threads=1 \
        >"$WORK/ours.log" 2>&1 &
      ;;
    nghttpd)
      "${SERVER_CPU[@]}" "$NGHTTPD" -n 1 --no-tls -a 127.0.0.1 -d "$WORK/root" "$PORT" \
        >"$WORK/nghttpd.log" 2>&1 &
      ;;
    h2o)
      cat >"$WORK/h2o.conf" <<EOF
num-threads: 1
listen:
  host: 127.0.0.1
  port: $PORT
hosts:
  default:
    paths:
      /:
        file.dir: $WORK/root
EOF
      "${SERVER_CPU[@]}" "$H2O" -c "$WORK/h2o.conf" >"$WORK/h2o.log" 2>&1 &
      ;;
  esac
  SERVER_PID=$!
  wait_port "$PORT"
}

# run_shape CONNECTIONS STREAMS: prints "req_per_s us_cpu_per_req"
run_shape() {
  local before after out rps
  before="$(cpu_ticks "$SERVER_PID")"
  out="$("${LOAD_CPU[@]}" "$H2LOAD" -n "$N" -c "$1" -m "$2" \
    "http://127.0.0.1:$PORT/index.html" 2>&1)"
  after="$(cpu_ticks "$SERVER_PID")"
  if ! grep -q "requests: $N total, $N started, $N done, $N succeeded" <<<"$out"; then
    echo "h2load: not all requests succeeded:" >&2
    echo "$out" >&2
    exit 1
  fi
  rps="$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")"
  awk -v r="$rps" -v b="$before" -v a="$after" -v t="$TICKS" -v n="$N" \
    'BEGIN { printf "%.0f %.2f\n", r, (a - b) / t / n * 1e6 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A RPS CPU
SERVERS=(ours nghttpd h2o)
SHAPES=("32 10" "1 32")
for server in "${SERVERS[@]}"; do
  start_server "$server"
  # Warm up (connections, caches, page faults).
  "$H2LOAD" -n 2000 -c 4 -m 10 "http://127.0.0.1:$PORT/index.html" >/dev/null 2>&1
  for shape in "${SHAPES[@]}"; do
    read -r c m <<<"$shape"
    results=()
    for _ in $(seq "$REPS"); do results+=("$(run_shape "$c" "$m")"); done
    RPS["$server/$shape"]="$(printf '%s\n' "${results[@]}" | cut -d' ' -f1 | median)"
    CPU["$server/$shape"]="$(printf '%s\n' "${results[@]}" | cut -d' ' -f2 | median)"
  done
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
done

echo "h2load -n $N, 15-octet file, h2c, one server thread; median of $REPS runs"
echo "(server on CPU 0, h2load on CPU 1: ${SERVER_CPU[*]:-not pinned})"
echo
printf '| %-26s | %-8s | %10s | %11s | %13s | %12s |\n' \
  shape server "req/s" "vs h2o" "CPU us/req" "vs h2o"
printf '|%s|%s|%s|%s|%s|%s|\n' "----------------------------" "----------" \
  "------------:" "-------------:" "---------------:" "--------------:"
for shape in "${SHAPES[@]}"; do
  read -r c m <<<"$shape"
  for server in "${SERVERS[@]}"; do
    awk -v s="h2load -c $c -m $m" -v name="$server" \
      -v r="${RPS[$server/$shape]}" -v rh="${RPS[h2o/$shape]}" \
      -v u="${CPU[$server/$shape]}" -v uh="${CPU[h2o/$shape]}" \
      'BEGIN { printf "| %-26s | %-8s | %10d | %10.2fx | %13.2f | %11.2fx |\n",
               s, name, r, r / rh, u, (uh > 0 ? u / uh : 0) }'
  done
done
