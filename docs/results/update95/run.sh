#!/bin/sh
# The PermART paper's update-heavy comparison (issue #15): 95% updates and 5%
# lookups of present keys, uniform, 10M records, permart, permart-2log and
# pmasstree interleaved, 1 and 2 threads, REPS repetitions (medians: summary.py).
#   docs/results/update95/run.sh PMINDEX OUTDIR [REPS] [RECORDS]
set -eu
B=$1; OUT=$2; REPS=${3:-3}; N=${4:-10000000}
mkdir -p "$OUT"
P=/dev/shm/pmindex-update95.pool
for r in $(seq 1 "$REPS"); do
  for t in 1 2; do
    rm -f $P
    "$B" bench --index permart,permart-2log,pmasstree --workload read=0.05+update=0.95 -n "$N" -t $t --seconds 5 \
      --pin --seed "$r" --no-progress --pool $P --json "$OUT/t$t-r$r.json" > "$OUT/t$t-r$r.txt" 2>&1 || echo "t$t r$r failed"
  done
done
rm -f $P
