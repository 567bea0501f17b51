#!/usr/bin/env bash
# `pmindex crashtest --threads T` on every single-threaded persistent index
# (index_entry::concurrent false), in each of its crash-testable modes: the
# checker runs the threads' operations under one lock, so the run finds no
# violation (without the lock the threads corrupted the index and the
# checker reported false violations, then died of SIGSEGV).
# usage: threads_serial.sh PMINDEX
set -u
PM=$1
fails=0 runs=0
indexes=$("$PM" list --json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["indexes"]:
    if e["persistent"] and not e["concurrent"]:
        print(e["name"], " ".join(m for m in e["modes"] if m in ("persist", "tx")))')
[ -n "$indexes" ] || { echo "FAIL: no single-threaded persistent index listed"; exit 1; }
run() {  # run ARGS...: exit 0 and a "0 violations" summary
  runs=$((runs + 1))
  out=$(timeout 600 "$PM" crashtest "$@" --quiet 2>&1); rc=$?
  if [ $rc -ne 0 ] || ! grep -q ' 0 violations$' <<< "$out"; then
    echo "FAIL: pmindex crashtest $* exited $rc:"
    head -c 1500 <<< "$out"; echo
    fails=$((fails + 1))
  else
    grep 'violations$' <<< "$out"
  fi
}
while read -r name modes; do
  # An array's capacity for the keys: the test profile's (crashtest's own default).
  for mode in $modes; do
    run --index "$name" --mode "$mode" --threads 2 --images 100 --ops 200 --seed 5
  done
  run --index "$name" --threads 4 --keyset shared --keys 32 --images 100 --ops 400 --seed 6
done <<< "$indexes"
echo "$runs runs, $fails failures"
[ $fails -eq 0 ]
