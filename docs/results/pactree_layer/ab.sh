#!/bin/sh
# PACTree with its search layer in DRAM, rebuilt at every open (OLD binary),
# against the persistent radix-tree layer (NEW), interleaved: 3 rounds x
# {u64, urls} x {1, 2 threads} x {old, new}, 1M records, the five phases on
# one prefill, --pin. Then the reopen at 10M: clean and after a crash
# (bench --recover), old and new interleaved, 3 rounds.
#   docs/results/pactree_layer/ab.sh OLD NEW DIR
#   python3 docs/results/pactree_layer/summary.py DIR
set -eu
OLD=$1; NEW=$2; OUT=$3; mkdir -p "$OUT"
P=/dev/shm/ptab.pool
for r in 1 2 3; do for ds in u64 urls; do for t in 1 2; do for b in old new; do
  eval bin=\$$(echo "$b" | tr a-z A-Z)
  rm -f $P
  "$bin" bench --index pactree -n 1M -t $t --dataset $ds --workload read100,insert=1,update=1,read=0.5+update=0.5,scan=1:100 \
    --same-index --seconds 3 --pin --no-progress --no-check --seed $r --pool $P \
    --json "$OUT/$b-$ds-t$t-r$r.json" > "$OUT/$b-$ds-t$t-r$r.txt" 2>&1
done; done; done; done
for r in 1 2 3; do for b in old new; do
  eval bin=\$$(echo "$b" | tr a-z A-Z)
  rm -f $P
  "$bin" bench --index pactree --universe sparse -n 10M --read 1 -t 1 --seconds 0.5 --recover --seed $r \
    --no-progress --pool $P --json "$OUT/recover-$b-r$r.json" > "$OUT/recover-$b-r$r.txt" 2>&1
done; done
rm -f $P
