#!/bin/sh
# DPTree's buffer as std::map (OLD binary) against abseil's btree_map (NEW),
# interleaved: 3 rounds x {1, 2 threads} x {old, new}, 1M u64 records, the
# five phases on one prefill. Medians: docs/results/dptree_buffer/summary.py DIR
#   docs/results/dptree_buffer/ab.sh OLD NEW DIR
set -eu
OLD=$1; NEW=$2; OUT=$3; mkdir -p "$OUT"
for r in 1 2 3; do for t in 1 2; do for b in old new; do
  eval bin=\$$(echo "$b" | tr a-z A-Z)
  rm -f /dev/shm/dpab.pool
  "$bin" bench --index dptree -n 1M -t $t --workload read100,insert=1,update=1,read=0.5+update=0.5,scan=1:100 \
    --same-index --seconds 3 --pin --no-progress --no-check --seed $r --pool /dev/shm/dpab.pool \
    --json "$OUT/$b-t$t-r$r.json" > "$OUT/$b-t$t-r$r.txt" 2>&1
done; done; done
rm -f /dev/shm/dpab.pool
