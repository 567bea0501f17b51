#!/bin/sh
# Interleaved scan A/B (issue #20): binaries A and B (and C...) run the same
# scan phases on the same indexes, A B A B ..., ROUNDS rounds, 1M records,
# 1 thread. Medians by docs/results/scan/medians.py OUTDIR.
#   ROUNDS=3 docs/results/scan/ab.sh OUTDIR "name=path name=path ..." [indexes] [workloads]
# EXTRA: more bench options for every run (e.g. EXTRA="--dataset u64-bytes").
set -eu
out=$1; bins=$2; mkdir -p "$out"
indexes=${3:-fptree,lbtree}
workloads=${4:-scan=1:100}
for r in $(seq 1 "${ROUNDS:-3}"); do
  for nb in $bins; do
    name=${nb%%=*}; bin=${nb#*=}
    "$bin" bench --index "$indexes" --same-index --workload "$workloads" -n 1M -t 1 --seconds 2 --pin \
      --no-progress --pool /dev/shm/scan-ab.pool ${EXTRA:-} --json "$out/$name-$r.json" > "$out/$name-$r.txt" 2>&1
  done
done
rm -f /dev/shm/scan-ab.pool
