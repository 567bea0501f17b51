#!/bin/bash
# PiBench ABI interop, both ways, checked by code that does not share
# pmindex's tree_api header (tests/interop/master_tree_api.hpp):
#  - pibench_driver (PiBench master's calls) drives libpmindex_pibench.so over
#    several indexes, u64 and byte sizes; the bulk-layout library must fail it
#    (the test catches a one-slot-off vtable);
#  - `pmindex bench --plugin` runs a third-party master wrapper (std::map),
#    and refuses to pass it with --plugin-abi bulk; the bulk library runs with
#    --plugin-abi bulk;
#  - the pmindex wrapper's flush/fence counters reach the harness's figures.
# usage: pibench_interop.sh PMINDEX DRIVER LIBMASTER LIBBULK LIBMAP
set -u
PM=$1 DRIVER=$2 LIB=$3 BULK=$4 MAP=$5
DIR=$(mktemp -d /dev/shm/pmindex-interop.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for idx in canary permart fptree wort; do
  PMINDEX_INDEX=$idx "$DRIVER" "$LIB" "$DIR/d.pool" || fail "driver over $idx (u64) exited $?"
  PMINDEX_INDEX=$idx "$DRIVER" "$LIB" "$DIR/d.pool" 12 20 || fail "driver over $idx (bytes) exited $?"
done
# The wrong layout must not pass (a crash or wrong answers).
PMINDEX_INDEX=canary "$DRIVER" "$BULK" "$DIR/d.pool" > "$DIR/wrong.txt" 2>&1 && fail "driver passed the bulk layout"
echo "bulk-layout library under the master driver: refused as it must be"

small=(-n 20000 -p 20000 -t 2 --pool "$DIR/p.pool" --no-progress --workload ycsb-a,ycsb-e)
"$PM" bench --plugin "$MAP" "${small[@]}" > "$DIR/map.txt" || { cat "$DIR/map.txt"; fail "bench of the map wrapper exited $?"; }
cat "$DIR/map.txt"
[ "$(grep -c ' ok$' "$DIR/map.txt")" -eq 2 ] || fail "map wrapper rows not checked ok"
"$PM" bench --plugin "$MAP" --plugin-abi bulk "${small[@]}" > "$DIR/mapbulk.txt" 2>&1 \
  && fail "bench passed a master wrapper with --plugin-abi bulk"
"$PM" bench --plugin "$MAP" --plugin-abi sideways "${small[@]}" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--plugin-abi sideways: expected exit 2, got $rc"
PMINDEX_INDEX=canary "$PM" bench --plugin "$BULK" --plugin-abi bulk "${small[@]}" > "$DIR/bulk.txt" \
  || fail "bench of the bulk library with --plugin-abi bulk exited $?"
[ "$(grep -c ' ok$' "$DIR/bulk.txt")" -eq 2 ] || fail "bulk library rows not checked ok"

# pmindex's wrapper reports its substrate's counters: a persistent insert flushes.
PMINDEX_INDEX=canary "$PM" bench --plugin "$LIB" -n 20000 -p 20000 -t 1 --pool "$DIR/p.pool" --no-progress \
  --workload update90insert10 --json "$DIR/c.json" > /dev/null || fail "bench of pmindex's wrapper exited $?"
python3 - "$DIR/c.json" <<'PY' || fail "no flushes reported through the plugin"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"] if "runs" in d else d["results"]
def walk(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("flushes_per_op", "flushes") and isinstance(v, (int, float)) and v > 0:
                return True
            if walk(v):
                return True
    if isinstance(x, list):
        return any(walk(v) for v in x)
    return False
sys.exit(0 if walk(runs) else 1)
PY
echo "pibench interop: ok"
