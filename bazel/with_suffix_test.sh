#!/bin/bash
# Fails listing its arguments, the wrong answers with_suffix_test.bzl found; passes
# with none.
if [[ $# -gt 0 ]]; then
  printf '%s\n' "$@" >&2
  exit 1
fi
echo "with_suffix: every label form ok"
