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
# A third shape, ours and h2o only: a 64 KiB compressible text file (the
# repository's Markdown) fetched with accept-encoding: gzip (h2load -c 4
# -m 10; N requests for ours, N/20 for h2o): ours sends a gzip body compressed once and cached
# (zlib level 6); h2o (`compress: ON`) compresses every response on the fly.
#
# The servers run side by side, all started first, and each repetition runs
# every server in turn (round-robin, the starting server rotating per
# repetition), so that the load of this shared machine weighs on all of them
# alike rather than on whichever ran during a busy minute.
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
declare -A PID PORTS
cleanup() {
  for pid in "${PID[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/root"
chmod 755 "$WORK" "$WORK/root"  # h2o started as root serves as nobody
printf 'hello, world!!\n' >"$WORK/root/index.html"  # 15 octets
# 64 KiB of compressible text: the repository's Markdown, repeated.
while (($(stat -c %s "$WORK/root/page.html" 2>/dev/null || echo 0) < 65536)); do
  cat README.md benchmarks/README.md >>"$WORK/root/page.html"
done
truncate -s 65536 "$WORK/root/page.html"
chmod 644 "$WORK/root/index.html" "$WORK/root/page.html"
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

start_server() {  # NAME: sets PID[NAME] and PORTS[NAME]
  local PORT
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
        compress: ON
EOF
      "${SERVER_CPU[@]}" "$H2O" -c "$WORK/h2o.conf" >"$WORK/h2o.log" 2>&1 &
      ;;
  esac
  PID[$1]=$!
  PORTS[$1]="$PORT"
  wait_port "$PORT"
}

# run_shape SERVER CONNECTIONS STREAMS PATH ACCEPT REQUESTS: prints
# "req_per_s us_cpu_per_req"; ACCEPT "-" sends no accept-encoding.
run_shape() {
  local before after out rps n="$6" header=()
  [[ "$5" != - ]] && header=(-H "accept-encoding: $5")
  before="$(cpu_ticks "${PID[$1]}")"
  out="$("${LOAD_CPU[@]}" "$H2LOAD" -n "$n" -c "$2" -m "$3" "${header[@]}" \
    "http://127.0.0.1:${PORTS[$1]}$4" 2>&1)"
  after="$(cpu_ticks "${PID[$1]}")"
  if ! grep -q "requests: $n total, $n started, $n done, $n succeeded" <<<"$out"; then
    echo "h2load: not all requests succeeded:" >&2
    echo "$out" >&2
    exit 1
  fi
  rps="$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")"
  awk -v r="$rps" -v b="$before" -v a="$after" -v t="$TICKS" -v n="$n" \
    'BEGIN { printf "%.0f %.2f\n", r, (a - b) / t / n * 1e6 }'
}

# gzip_octets SERVER: the octets of the DATA frames answering a gzip request
# for page.html; fails unless the answer is gzip.
gzip_octets() {
  local log
  log="$(/usr/bin/nghttp -v -H 'accept-encoding: gzip' "http://127.0.0.1:${PORTS[$1]}/page.html" 2>&1)"
  grep -q 'content-encoding: gzip' <<<"$log" || return 1
  sed -n 's/.*recv DATA frame <length=\([0-9]*\),.*/\1/p' <<<"$log" | awk '{ n += $1 } END { print n }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A RPS CPU RESULTS
SERVERS=(ours nghttpd h2o)
# "CONNECTIONS STREAMS PATH ACCEPT"
SHAPES=("32 10 /index.html -" "1 32 /index.html -" "4 10 /page.html gzip")
# gzip 64K: ours answers from its cache, h2o compresses each response (about
# 1/25 of the rate): N requests for ours, N/20 for h2o.
GZIP_N=$((N / 20))
for server in "${SERVERS[@]}"; do
  start_server "$server"
  # Warm up (connections, caches, page faults).
  "$H2LOAD" -n 2000 -c 4 -m 10 "http://127.0.0.1:${PORTS[$server]}/index.html" >/dev/null 2>&1
done
declare -A GZIP_OCTETS
for server in ours h2o; do
  GZIP_OCTETS[$server]="$(gzip_octets "$server")" ||
    { echo "$server does not send gzip for page.html" >&2; exit 1; }
done
for rep in $(seq "$REPS"); do
  # Round-robin, the first server rotating per repetition.
  for i in "${!SERVERS[@]}"; do
    server="${SERVERS[$(((i + rep) % ${#SERVERS[@]}))]}"
    for shape in "${SHAPES[@]}"; do
      read -r c m path accept <<<"$shape"
      n="$N"
      if [[ "$accept" != - ]]; then
        [[ "$server" == nghttpd ]] && continue  # nghttpd does not compress
        [[ "$server" == h2o ]] && n="$GZIP_N"
      fi
      RESULTS["$server/$shape"]+="$(run_shape "$server" "$c" "$m" "$path" "$accept" "$n")"$'\n'
    done
  done
done
for key in "${!RESULTS[@]}"; do
  RPS["$key"]="$(printf '%s' "${RESULTS[$key]}" | cut -d' ' -f1 | median)"
  CPU["$key"]="$(printf '%s' "${RESULTS[$key]}" | cut -d' ' -f2 | median)"
done

echo "h2load -n $N, 15-octet file, h2c, one server thread; median of $REPS runs"
echo "(gzip 64K: -H 'accept-encoding: gzip', a 64 KiB text file, -n $N for ours and $GZIP_N for h2o;"
echo " gzip body: ours ${GZIP_OCTETS[ours]} octets (zlib 6, cached), h2o ${GZIP_OCTETS[h2o]} (per response))"
echo "(server on CPU 0, h2load on CPU 1: ${SERVER_CPU[*]:-not pinned})"
echo
printf '| %-26s | %-8s | %10s | %11s | %13s | %12s |\n' \
  shape server "req/s" "vs h2o" "CPU us/req" "vs h2o"
printf '|%s|%s|%s|%s|%s|%s|\n' "----------------------------" "----------" \
  "------------:" "-------------:" "---------------:" "--------------:"
for shape in "${SHAPES[@]}"; do
  read -r c m path accept <<<"$shape"
  label="h2load -c $c -m $m"
  [[ "$accept" != - ]] && label="$label $accept 64K"
  for server in "${SERVERS[@]}"; do
    [[ -n "${RPS[$server/$shape]:-}" ]] || continue
    awk -v s="$label" -v name="$server" \
      -v r="${RPS[$server/$shape]}" -v rh="${RPS[h2o/$shape]}" \
      -v u="${CPU[$server/$shape]}" -v uh="${CPU[h2o/$shape]}" \
      'BEGIN { printf "| %-26s | %-8s | %10d | %10.2fx | %13.2f | %11.2fx |\n",
               s, name, r, r / rh, u, (uh > 0 ? u / uh : 0) }'
  done
done
