#!/bin/bash
# The public headers are the API: a translation unit that includes every one
# of them (rpc/rpc.h first) reaches no header of transport/ or rpc/internal/.
# $1 is that translation unit's dependency list (the compiler's -M -MG
# output: the headers it reached, found or not).
set -euo pipefail

deps="$1"
if [[ ! -s "${deps}" ]]; then
  echo "FAIL: empty dependency list ${deps}"
  exit 1
fi
# One header per line, relative paths only (system headers are absolute).
headers="$(tr ' \\' '\n\n' < "${deps}" | sed '/^$/d; /:$/d' | grep -v '^/' || true)"
# The list is real: rpc.h and what it includes are in it.
for expected in rpc/rpc.h rpc/channel.h rpc/server.h rpc/wire/status.h; do
  if ! grep -qx "${expected}" <<< "${headers}"; then
    echo "FAIL: ${expected} is not in the dependency list:"
    echo "${headers}"
    exit 1
  fi
done
forbidden="$(grep -E '(^|/)(transport/|rpc/internal/)' <<< "${headers}" || true)"
if [[ -n "${forbidden}" ]]; then
  echo "FAIL: the public headers reach internal headers:"
  echo "${forbidden}"
  echo "(use forward declarations or move the code into a .cc file; rpc/README.md)"
  exit 1
fi
echo "PASS: $(wc -l <<< "${headers}") project headers, none from transport/ or rpc/internal/"
