#!/bin/bash
# The layering rules of transport/README.md over the genquery graphs of BUILD.bazel:
#   - no target in //transport/frame, //transport/connection or their fuzz/ packages
#     reaches //transport/io, tls, driver, http, or anything in //rpc, //examples,
#     //tests or //benchmarks (the sans-IO core knows no sockets, loops or callers);
#   - no target in //hpack/... reaches anything of ours outside //hpack, except the
#     build support in //bazel and the vendored test data in //third_party;
#   - the package-level internal dependencies of both equal the golden files, so a new
#     one is added there deliberately.
# A forbidden edge is printed with a path to it from the package that gained it.
#
# Usage: layering_test.sh SANS_IO_GRAPH SANS_IO_GOLDEN HPACK_GRAPH HPACK_GOLDEN
#        layering_test.sh --update GRAPH GOLDEN   (rewrites GOLDEN's edges from GRAPH)
set -euo pipefail

# Edges between our own targets ("//a:x //b:y"), external repositories left out.
label_edges() {
  sed -n 's|^  "\(//[^"]*\)" -> "\(//[^"]*\)"$|\1 \2|p' "$1"
}

# "//a -> //b" for every edge between two different packages of ours.
package_edges() {
  label_edges "$1" | awk '{
    split($1, from, ":"); split($2, to, ":")
    if (from[1] != to[1]) print from[1] " -> " to[1]
  }' | LC_ALL=C sort -u
}

if [[ "${1:-}" == --update ]]; then
  { grep '^#' "$3" || true; package_edges "$2"; } >"$3.new"
  mv "$3.new" "$3"
  exit 0
fi

failed=0

# check NAME GRAPH ROOTS_RE FORBIDDEN_RE EXCEPT_RE RULE
# A node is forbidden when its label matches FORBIDDEN_RE and not EXCEPT_RE (EREs).
check_forbidden() {
  local name="$1" graph="$2" roots="$3" forbidden="$4" except="$5" rule="$6"
  if [[ -z "$(label_edges "$graph")" ]]; then
    echo "FAIL $name: no dependency edges in $graph (is it a genquery --output=graph?)"
    failed=1
    return
  fi
  local report
  report=$(label_edges "$graph" | awk -v roots="$roots" -v forbidden="$forbidden" \
    -v except="$except" '
    function bad(label) { return label ~ forbidden && label !~ except }
    { from[NR] = $1; to[NR] = $2; out[$1] = out[$1] " " $2 }
    END {
      # Breadth-first from every node of the checked packages: parent[] gives the
      # shortest path to each node reached.
      head = 0; tail = 0
      for (i = 1; i <= NR; ++i) {
        if (from[i] ~ roots && !(from[i] in seen)) {
          seen[from[i]] = 1; queue[tail++] = from[i]
        }
      }
      while (head < tail) {
        node = queue[head++]
        if (bad(node)) continue
        n = split(out[node], next_nodes, " ")
        for (j = 1; j <= n; ++j) {
          if (!(next_nodes[j] in seen)) {
            seen[next_nodes[j]] = 1; parent[next_nodes[j]] = node
            queue[tail++] = next_nodes[j]
          }
        }
      }
      for (i = 1; i <= NR; ++i) {
        if (!bad(to[i]) || bad(from[i]) || !(from[i] in seen)) continue
        key = from[i] " -> " to[i]
        if (key in printed) continue
        printed[key] = 1
        path = to[i]
        for (node = from[i]; node != ""; node = parent[node]) path = node " -> " path
        print "  forbidden edge: " key
        if (path != key) print "    reached by:   " path
      }
    }')
  if [[ -n "$report" ]]; then
    echo "FAIL $name: $rule"
    echo "$report"
    failed=1
  else
    echo "ok   $name: $rule"
  fi
}

# check_golden NAME GRAPH GOLDEN
check_golden() {
  local name="$1" graph="$2" golden="$3" diff_out
  if diff_out=$(diff -u --label "$(basename "$golden") (golden)" --label "now" \
    <(grep -v '^#' "$golden" | grep -v '^$') <(package_edges "$graph")); then
    echo "ok   $name: package dependencies equal $(basename "$golden")"
  else
    echo "FAIL $name: the package dependencies changed (- golden, + now):"
    echo "$diff_out" | tail -n +3
    echo "  If the change is intended and the layering of transport/README.md allows"
    echo "  it, update tests/layering/$(basename "$golden") (see its first lines)."
    failed=1
  fi
}

[[ $# -eq 4 ]] || { echo "usage: $0 SANS_IO_GRAPH SANS_IO_GOLDEN HPACK_GRAPH HPACK_GOLDEN"; exit 2; }

check_forbidden "sans-IO core" "$1" \
  '^//transport/(frame|connection)(/fuzz)?:' \
  '^//(transport/(io|tls|driver|http)|rpc|examples|tests|benchmarks)([/:])' \
  '^$' \
  "frame and connection (and their fuzz/) may not depend on //transport/io, tls, driver, http, //rpc, //examples, //tests or //benchmarks"
check_golden "sans-IO core" "$1" "$2"

check_forbidden "hpack" "$3" \
  '^//hpack[/:]' \
  '^//' \
  '^//(hpack|bazel|third_party)[/:]' \
  "//hpack may depend on nothing of ours outside //hpack (but //bazel and //third_party)"
check_golden "hpack" "$3" "$4"

exit "$failed"
