#!/bin/sh
# callgrind_per_call.py on the same profile written both ways: names
# compressed ("fn=(1) main", then "fn=(1)"; callgrind's default) and plain
# (--compress-strings=no: "fn=main" every time). Both must give the same
# per-call counts (the plain form crashed the script).
# $1 is the script.
set -eu
script="$1"
dir="${TEST_TMPDIR:-/tmp}"
cat >"$dir/compressed.out" <<'PROFILE'
version: 1
creator: callgrind_per_call_test
events: Ir
fl=(1) a.c
fn=(1) main
1 10
cfn=(2) TimedWork
calls=1 2
* 600
cfn=(2)
calls=9 2
* 5700
cfn=(3) (anonymous namespace)::Helper
calls=2 3
* 40
fn=(2)
2 6300
fn=(3)
3 40
PROFILE
cat >"$dir/plain.out" <<'PROFILE'
version: 1
creator: callgrind_per_call_test
events: Ir
fl=a.c
fn=main
1 10
cfn=TimedWork
calls=1 2
* 600
cfn=TimedWork
calls=9 2
* 5700
cfn=(anonymous namespace)::Helper
calls=2 3
* 40
fn=TimedWork
2 6300
fn=(anonymous namespace)::Helper
3 40
PROFILE
expected='       630 Ir/call       10 calls  TimedWork'
for form in compressed plain; do
  got="$(python3 "$script" "$dir/$form.out" Timed)"
  if [ "$got" != "$expected" ]; then
    echo "callgrind_per_call_test: $form: got '$got', want '$expected'" >&2
    exit 1
  fi
  got="$(python3 "$script" "$dir/$form.out" 'anonymous')"
  want='        20 Ir/call        2 calls  (anonymous namespace)::Helper'
  if [ "$got" != "$want" ]; then
    echo "callgrind_per_call_test: $form: got '$got', want '$want'" >&2
    exit 1
  fi
done
echo PASS
