#!/bin/bash
# u64 no-slowdown check of the byte-key work (#13): the previous release
# (03714c5, built -march=native as it was then) against this tree's release
# build (default -march=x86-64-v2, run-time SIMD dispatch), interleaved
# A B A B ... on one machine, the u64 path, 1M records, 1 thread, pinned.
#   PREV=/path/to/prev/pmindex NEW=build/release/pmindex ROUNDS=3 \
#     docs/results/bytes/u64_noslowdown.sh OUTDIR [indexes] [workloads]
# then: python3 docs/results/bytes/medians.py OUTDIR
set -eu
out=$1; mkdir -p "$out"
indexes=${2:-fptree,lbtree,woart,wort,artcow,permart,permart-2log,canary}
workloads=${3:-read=1,scan=1:100,insert=1}
for r in $(seq 1 "${ROUNDS:-3}"); do
  for b in prev new; do
    bin=$PREV; [ $b = new ] && bin=$NEW
    "$bin" bench --index "$indexes" --same-index --workload "$workloads" -n 1M -t 1 --seconds 2 --pin \
      --no-progress --pool /dev/shm/noslowdown.pool --json "$out/$b-$r.json" > "$out/$b-$r.txt" 2>&1
  done
done
rm -f /dev/shm/noslowdown.pool
