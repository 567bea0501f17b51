#!/bin/bash
# The measurements behind docs/results/harness.md (issue 4 targets).
# usage: docs/results/harness_measure.sh BUILD_DIR   (a release build: cmake -DPMINDEX_TESTS=OFF)
set -eu
PM=$1/pmindex
OUT=$(dirname "$0")/harness
POOL=/dev/shm/pmindex-harness-measure.pool
mkdir -p "$OUT"
uptime
for i in 1 2 3; do
  # Harness cost: the null index, one thread (generation is untimed).
  "$PM" bench --index null --workload read100,ycsb-a -t 1 --seconds 2 --no-progress --json "$OUT/null_$i.json"
  # The fastest real indexes at 1M records, one thread, uniform lookups.
  "$PM" bench --index btree-dram,fptree --workload read100 -t 1 -n 1M --seconds 2 --pool $POOL --no-progress \
    --json "$OUT/fastest_$i.json"
  # Reproducibility: the same command three times (compare run 1 with 2 and 3).
  "$PM" bench --index fptree --workload ycsb-a -t 2 -n 1M --seconds 2 --pool $POOL --no-progress \
    --json "$OUT/repeat_$i.json"
done
# A Zipfian run over a 2^63 key space: whole-process time (setup included).
for i in 1 2 3; do
  /usr/bin/time -f "zipf-2^63 process wall %e s" "$PM" bench --index null --workload ycsb-c --key-space 2^63 \
    -n 1000 -p 100000 -t 1 --no-progress --json "$OUT/zipf63_$i.json" > /dev/null
done
uptime
