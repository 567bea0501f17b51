#!/bin/sh
# Issue 20's before/after table: OLD (main before the issue's work, b34fc52)
# and NEW binaries, interleaved (rep > threads > index > side), 1M sparse u64
# records, one prefill per run and the workloads as phases on it, the
# read-only and size-keeping ones first and inserts last (so no phase runs on
# what an earlier side's faster inserts left), 2 s each, pinned.
#   OLD=.../pmindex NEW=.../pmindex OUT=DIR REPS=2 docs/results/issue20/run.sh
# Medians: python3 docs/results/issue20/summary.py DIR
set -eu
OUT=${OUT:?}; mkdir -p "$OUT"
IDX=${INDEXES:-fptree lbtree wort woart artcow permart permart-2log roart pactree utree pmasstree dptree btree-dram}
W=${WORKLOAD:-read100,scan=1:100,scan=1:1000,ycsb-b,ycsb-e,ycsb-a,update90insert10,insert=1}
# The sides take turns at going first, repetition by repetition (until session
# 55 old always went first; that run's control, the same code on both sides,
# gave new/old 0.74-0.97 at 1 thread).
for r in $(seq 1 "${REPS:-2}"); do
  if [ $((r % 2)) = 1 ]; then sides="old new"; else sides="new old"; fi
  for t in ${THREADS:-1 2}; do for i in $IDX; do for side in $sides; do
  eval bin=\$$(echo "$side" | tr a-z A-Z)
  "$bin" list 2>/dev/null | grep -q "^$i " || continue   # not in that build
  rm -f /dev/shm/issue20.pool
  "$bin" bench --index "$i" -n "${N:-1M}" -t "$t" --workload "$W" --same-index --seconds "${SECONDS_PER:-2}" \
    --pin --no-progress --no-check --seed "$r" --pool /dev/shm/issue20.pool \
    --json "$OUT/$side-$i-t$t-r$r.json" > "$OUT/$side-$i-t$t-r$r.txt" 2>&1 || echo "failed: $side $i t$t r$r" >&2
done; done; done; done
rm -f /dev/shm/issue20.pool
