#!/bin/sh
# Recovery at 10M records (issue #15): clean reopen and reopen after a
# simulated crash (abandon(): no clean shutdown), wall and CPU seconds, for
# the indexes that rebuild DRAM state at open (utree, fptree, lbtree, pactree,
# dptree once merged) beside pmasstree and permart. REPS repetitions; the
# medians come from summary.py.
#   docs/results/recovery10m/run.sh PMINDEX OUTDIR [REPS] [INDEXES]
set -eu
B=$1; OUT=$2; REPS=${3:-3}; IDX=${4:-utree,pmasstree,pactree,fptree,lbtree,permart}
mkdir -p "$OUT"
P=/dev/shm/pmindex-recovery10m.pool
for r in $(seq 1 "$REPS"); do
  rm -f $P
  "$B" bench --index "$IDX" --universe sparse -n 10000000 --read 1 -t 1 --seconds 0.5 --recover --seed "$r" \
    --no-progress --pool $P --json "$OUT/r$r.json" > "$OUT/r$r.txt" 2>&1 || echo "rep $r failed"
  rm -f $P
done
