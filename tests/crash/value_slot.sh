#!/usr/bin/env bash
# Every index whose value slot is a creation parameter (`value`, the
# pmemids structures) takes `crashtest`, `load`/`verify` and `stress` with a
# --value-size above the slot's default (default + 1, twice the default) without
# --params value=N: the verb creates the index for the value size it runs.
# usage: value_slot.sh PMINDEX
set -u
PM=$1
DIR=$(mktemp -d /dev/shm/pmindex-value-slot.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fails=0 runs=0
indexes=$("$PM" list --json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["indexes"]:
    for p in e["params"]:
        if p["name"] == "value" and e["persistent"]:
            print(e["name"], int(p["default"]) + 1, min(2 * int(p["default"]), int(p["max"])))')
[ -n "$indexes" ] || { echo "FAIL: no index with a value parameter listed"; exit 1; }
check() {  # check ARGS...: exit 0
  runs=$((runs + 1))
  out=$(timeout 600 "$PM" "$@" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: pmindex $* exited $rc: $(head -c 600 <<< "$out")"
    fails=$((fails + 1))
  fi
}
while read -r name above twice; do
  for size in $above $twice; do
    check crashtest --index "$name" --value-size "$size" --images 100 --ops 200 --seed 3 --quiet
    check load --index "$name" --pool "$DIR/$name.pool" --pool-size 64M --keys 2000 --value-size "$size"
    check verify --pool "$DIR/$name.pool" --keys 2000 --value-size "$size"
    rm -f "$DIR/$name.pool"
    check stress --index "$name" --threads 1 --seconds 0.2 --keys 500 --value-size "$size"
  done
  echo "$name: --value-size $above and $twice"
done <<< "$indexes"
echo "$runs runs, $fails failures"
[ $fails -eq 0 ]
