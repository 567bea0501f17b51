#!/bin/bash
# Issue 20, WORT-family writers that scale: main's binary (BASE, one global reader-writer lock) and
# this branch's (NEW, per-node version locks), interleaved run by run: for each repetition, index
# and thread count, BASE then NEW, each running the four workloads one after the other (each from
# its own prefill of N records). Medians of REPS: docs/results/wort_scaling_summary.py OUT.
#   BASE=/work/wt/wortbase/build/release/pmindex NEW=build/release/pmindex \
#   OUT=docs/results/wort_scaling docs/results/wort_scaling_bench.sh
set -eu
: "${BASE:?main\'s pmindex}" "${NEW:?this branch\'s pmindex}"
OUT=${OUT:-docs/results/wort_scaling}
REPS=${REPS:-3} N=${N:-1M} SECS=${SECS:-3}
INDEXES=${INDEXES:-wort woart artcow} THREADS=${THREADS:-1 2}
WORKLOAD=${WORKLOAD:-ycsb-a,ycsb-b,update90insert10,read100}
POOL=${POOL:-/dev/shm/wort_scaling-$$.pool}
mkdir -p "$OUT"
for r in $(seq 1 "$REPS"); do
  for i in $INDEXES; do
    for t in $THREADS; do
      for side in base new; do
        bin=$BASE
        [ "$side" = new ] && bin=$NEW
        echo "$(date +%T) r$r $i t$t $side" >&2
        "$bin" bench --index "$i" -n "$N" -t "$t" --workload "$WORKLOAD" --seconds "$SECS" --no-progress --pin \
          --pool "$POOL" --json "$OUT/$side-$i-t$t-r$r.json" > /dev/null
      done
    done
  done
done
rm -f "$POOL"
