#!/bin/bash
# examples/consumer, a workspace of its own that depends on this one as README.md's
# "Use it from your workspace" says, built and tested by a nested Bazel: the same
# `bazel` that ./bazelw runs, with an output root of its own under $TEST_TMPDIR, in
# batch mode (no server outlives it), offline (the test is tagged block-network).
# Then builds without the consumer's .bazelrc must stop with the C++17 hint.
#
# The nested workspace is made under $TEST_TMPDIR as the checkout looks:
#   src/examples/consumer/  a copy of the consumer's files from this test's runfiles
#                           (the `data` of BUILD.bazel, so a file left out of that list
#                           fails here, and Bazel reruns the test when one changes);
#   src/*                   symlinks to the real checkout's top-level entries, which the
#                           consumer's `local_repository(path = "../..")` reaches.
# The checkout is found from this script's own runfiles symlink (readlink -f): `data`
# cannot carry the whole source tree (a glob stops at every package), and the nested
# Bazel needs all of it. Nothing is written into the checkout.
#
# Usage: consumer_test.sh (no arguments; Bazel runs it from its runfiles).
set -euo pipefail

checkout=$(dirname "$(dirname "$(readlink -f "$0")")")
runfiles_consumer="$TEST_SRCDIR/$TEST_WORKSPACE/examples/consumer"
[[ -f $checkout/WORKSPACE && -d $runfiles_consumer ]] ||
  { echo "cannot find the checkout ($checkout) or the consumer's runfiles" >&2; exit 1; }
bazel=$(command -v bazel) ||
  { echo "no bazel on PATH (./bazelw runs the one Debian's bazel-bootstrap installs)" >&2; exit 1; }

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

# Every file of the consumer must be in the copy, or the nested build would test
# something other than examples/consumer.
missing=$(cd "$checkout/examples/consumer" &&
  find . -path './bazel-*' -prune -o -type f -print | while read -r f; do
    [[ -f $src/examples/consumer/$f ]] || echo "  examples/consumer/${f#./}"
  done)
if [[ -n $missing ]]; then
  echo "not in //examples:consumer_files (examples/BUILD.bazel), add them:" >&2
  echo "$missing" >&2
  exit 1
fi

cd "$src/examples/consumer"
log="$work/bazel.log"
start=$(date +%s)
# A clean environment: the outer test's TEST_TMPDIR, runfiles variables and HOME
# would otherwise steer the nested Bazel and its tests.
if ! env -i PATH="$PATH" HOME="$work/home" TMPDIR="$work/tmp" \
  "$bazel" --batch --output_user_root="$work/root" \
  test --symlink_prefix=/ --jobs=2 --sandbox_debug=false --test_output=errors \
  //... >"$log" 2>&1; then
  cat "$log"
  echo "consumer_test: the nested 'bazel test //...' in examples/consumer failed" >&2
  exit 1
fi
grep -E '^//.* (PASSED|FAILED)' "$log" || true
grep -q '^//greeter:greeter_test .*PASSED' "$log" ||
  { cat "$log"; echo "consumer_test: //greeter:greeter_test did not pass" >&2; exit 1; }
echo "consumer_test: nested build and test in $(($(date +%s) - start)) s"

# Without the .bazelrc line (--noworkspace_rc), Bazel 4 compiles -std=c++0x: the
# build must stop at analysis (//bazel:cxx17) with the line to add, through //rpc and
# through the fuzz main alone (//record:record_fuzzer_regression reaches no //rpc).
for target in //greeter:greeter_client //record:record_fuzzer_regression; do
  if env -i PATH="$PATH" HOME="$work/home" TMPDIR="$work/tmp" \
    "$bazel" --batch --output_user_root="$work/root" --noworkspace_rc \
    build --nobuild --symlink_prefix=/ "$target" >"$log" 2>&1; then
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
