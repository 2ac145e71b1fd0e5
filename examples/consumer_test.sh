#!/bin/bash
# examples/consumer, a workspace of its own that depends on this one as README.md's
# "Use it from your workspace" says, built and tested by a nested Bazel: the `bazel` on
# the test's PATH (Bazel gives tests /bin:/usr/bin:/usr/local/bin; Debian's
# bazel-bootstrap installs /usr/bin/bazel, which ./bazelw execs too unless the PATH it
# was started with finds another bazel first; the log names the version), with an
# output root of its own under $TEST_TMPDIR, in batch mode (no server outlives it),
# offline (the test is tagged block-network). In order:
#   1. the consumer's WORKSPACE holds the lines of README.md's WORKSPACE block, in
#      order (its `path = ` line is the consumer's "../.."), and its .bazelrc's lines
#      (comments aside) are the README's .bazelrc block;
#   2. every file of examples/consumer and of third_party/bazel (the stand-ins) is in
#      this test's data, so that a change to one reruns the test;
#   3. `bazel test //...` in the consumer passes;
#   4. `bazel query @h2rpc//...` from the consumer does not enter the checkout's
#      convenience symlinks (bazel-bin, ...: .bazelignore), made here as trees whose
#      BUILD file fails;
#   5. without the consumer's .bazelrc, builds of //greeter:greeter_client (through
#      //rpc) and of //record:record_fuzzer_regression (no //rpc, only the fuzz main)
#      each stop at analysis with the C++17 hint.
#
# The nested workspace is made under $TEST_TMPDIR as the checkout looks:
#   src/examples/consumer/  a copy of the consumer's files from this test's runfiles
#                           (the `data` of BUILD.bazel, so a file left out of that list
#                           fails here, and Bazel reruns the test when one changes);
#   src/*                   symlinks to the real checkout's top-level entries, which the
#                           consumer's `local_repository(path = "../..")` reaches.
# The checkout is found from this script's own runfiles symlink (readlink -f): `data`
# cannot carry the whole source tree (a glob stops at every package), and the nested
# Bazel needs all of it. Nothing is written into the checkout. So the test's `data`
# stands for the checkout: a change to a BUILD file or source that no data target
# reaches (say, a BUILD file under //transport) is not seen by a cached PASS here; run
# with --nocache_test_results to see it. CI runs from a fresh clone, so it always
# does.
#
# Usage: consumer_test.sh (no arguments; Bazel runs it from its runfiles).
set -euo pipefail

checkout=$(dirname "$(dirname "$(readlink -f "$0")")")
runfiles="$TEST_SRCDIR/$TEST_WORKSPACE"
runfiles_consumer="$runfiles/examples/consumer"
[[ -f $checkout/WORKSPACE && -d $runfiles_consumer ]] ||
  { echo "cannot find the checkout ($checkout) or the consumer's runfiles" >&2; exit 1; }
bazel=$(command -v bazel) ||
  { echo "no bazel on PATH (./bazelw runs the one Debian's bazel-bootstrap installs)" >&2; exit 1; }
echo "consumer_test: nested bazel: $bazel ($("$bazel" --version))"

work="$TEST_TMPDIR/consumer_test"
src="$work/src"
mkdir -p "$src/examples" "$work/home" "$work/tmp"
for entry in "$checkout"/* "$checkout"/.bazelignore; do
  name=$(basename "$entry")
  case $name in
    bazel-* | examples) ;;  # Convenience symlinks stay out; examples/ is made below.
    *) ln -s "$entry" "$src/$name" ;;
  esac
done
for entry in "$checkout"/examples/*; do
  [[ $(basename "$entry") == consumer ]] || ln -s "$entry" "$src/examples/"
done
# -L: the runfiles are symlinks; the copy holds the files themselves.
cp -RL "$runfiles_consumer" "$src/examples/consumer"

# 1. README.md's two blocks under "## Use it from your workspace": the WORKSPACE
# snippet, then the .bazelrc lines.
readme_block() {  # readme_block N: the Nth fenced block of that section, blank lines out
  awk -v n="$1" '
    /^## / { in_section = ($0 == "## Use it from your workspace") }
    in_section && /^```/ { fence = !fence; if (fence) block++; next }
    in_section && fence && block == n && NF' "$runfiles/README.md"
}
snippet=$(readme_block 1 | sed 's|^\( *path = \).*|\1"../..",|')
bazelrc=$(readme_block 2)
[[ -n $snippet && -n $bazelrc ]] ||
  { echo "consumer_test: README.md has no two blocks under '## Use it from your workspace'" >&2; exit 1; }
# The first snippet line that the consumer's WORKSPACE lacks (in order), if any.
lacking=$(awk 'NR == FNR { want[++n] = $0; next }
  i < n && $0 == want[i + 1] { i++ }
  END { if (i < n) print want[i + 1] }' \
  <(printf '%s\n' "$snippet") "$src/examples/consumer/WORKSPACE")
if [[ -n $lacking ]]; then
  echo "consumer_test: examples/consumer/WORKSPACE does not follow README.md's snippet" >&2
  echo "(its lines in order; path = \"../..\"); it lacks, from here on: $lacking" >&2
  echo "README.md's snippet:" >&2
  printf '%s\n' "$snippet" >&2
  exit 1
fi
consumer_bazelrc=$(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$src/examples/consumer/.bazelrc" || true)
if [[ $consumer_bazelrc != "$bazelrc" ]]; then
  echo "consumer_test: examples/consumer/.bazelrc (comments aside) is not README.md's" >&2
  echo ".bazelrc block (< README.md, > .bazelrc):" >&2
  diff <(printf '%s\n' "$bazelrc") <(printf '%s\n' "$consumer_bazelrc") >&2 || true
  exit 1
fi
echo "consumer_test: WORKSPACE and .bazelrc match README.md's snippet"

# 2. Every file of the consumer must be in the copy, or the nested build would test
# something other than examples/consumer; every file of the stand-ins must be in the
# runfiles, or a change to one would not rerun this test.
missing=$(cd "$checkout/examples/consumer" &&
  find . -path './bazel-*' -prune -o -type f -print | while read -r f; do
    [[ -f $src/examples/consumer/$f ]] || echo "  examples/consumer/${f#./}"
  done)
if [[ -n $missing ]]; then
  echo "not in //examples:consumer_files (examples/BUILD.bazel), add them (an untracked" >&2
  echo "scratch file there counts too: remove it, or list it if it belongs):" >&2
  echo "$missing" >&2
  exit 1
fi
missing=$(cd "$checkout" && find third_party/bazel -type f | while read -r f; do
  [[ -f $runfiles/$f ]] || echo "  $f"
done)
if [[ -n $missing ]]; then
  echo "not in //third_party:stand_in_files (a stand_in_files filegroup in each package" >&2
  echo "of third_party/bazel, listed in third_party/BUILD.bazel), add them:" >&2
  echo "$missing" >&2
  exit 1
fi

# 3. The consumer's own tests.
cd "$src/examples/consumer"
log="$work/bazel.log"
# A clean environment: the outer test's TEST_TMPDIR, runfiles variables and HOME
# would otherwise steer the nested Bazel and its tests.
nested_bazel() {
  env -i PATH="$PATH" HOME="$work/home" TMPDIR="$work/tmp" \
    "$bazel" --batch --output_user_root="$work/root" "$@"
}
start=$(date +%s)
if ! nested_bazel test --symlink_prefix=/ --jobs=2 --sandbox_debug=false --test_output=errors \
  //... >"$log" 2>&1; then
  cat "$log"
  echo "consumer_test: the nested 'bazel test //...' in examples/consumer failed" >&2
  exit 1
fi
grep -E '^//.* (PASSED|FAILED)' "$log" || true
for t in //greeter:greeter_test //relay:relay_test; do
  grep -q "^$t .*PASSED" "$log" ||
    { cat "$log"; echo "consumer_test: $t did not pass" >&2; exit 1; }
done
echo "consumer_test: nested build and test in $(($(date +%s) - start)) s"

# 4. A checkout that has been built has bazel-bin, bazel-out, bazel-testlogs and
# bazel-<its folder's name> (bazel-h2rpc in a fresh clone); the consumer's
# `bazel query @h2rpc//...` must not walk into them (.bazelignore).
for name in bazel-bin bazel-out bazel-testlogs bazel-h2rpc; do
  mkdir "$src/$name"
  echo "fail(\"@h2rpc//$name entered: add $name to .bazelignore\")" >"$src/$name/BUILD.bazel"
done
if ! nested_bazel query '@h2rpc//...' >"$log" 2>&1; then
  cat "$log"
  echo "consumer_test: 'bazel query @h2rpc//...' from the consumer failed" >&2
  exit 1
fi
echo "consumer_test: bazel query @h2rpc//... from the consumer: $(wc -l <"$log") lines"

# 5. Without the .bazelrc line (--noworkspace_rc), Bazel 4 compiles -std=c++0x: the
# build must stop at analysis (//bazel:cxx17) with the line to add, through //rpc and
# through the fuzz main alone.
for target in //greeter:greeter_client //record:record_fuzzer_regression; do
  if nested_bazel --noworkspace_rc build --nobuild --symlink_prefix=/ "$target" >"$log" 2>&1; then
    cat "$log"
    echo "consumer_test: a build of $target without C++17 got past analysis" >&2
    exit 1
  fi
  # (The traceback quotes the fail() call too: match the message Bazel prints.)
  hint=$(grep -m1 -o 'Error in fail: h2rpc needs C++17.*' "$log") &&
    grep -qxF '    build --cxxopt=-std=c++17 --host_cxxopt=-std=c++17' "$log" ||
    { cat "$log"; echo "consumer_test: no C++17 hint for $target without the .bazelrc line" >&2; exit 1; }
  echo "consumer_test: $target without the .bazelrc line: $hint"
done
