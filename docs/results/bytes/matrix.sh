#!/bin/bash
# The byte-key measurements of #13: every index and baseline, 1M records,
# 1 and 2 threads, each dataset; per run: load (insert) Mops, read100,
# scan100 and insert Mops, PM bytes/record, flushes/fences per insert.
#   BIN=build/release/pmindex docs/results/bytes/matrix.sh OUTDIR
# then: python3 docs/results/bytes/matrix_table.py OUTDIR
set -u
out=$1; mkdir -p "$out"
bin=${BIN:-build/release/pmindex}
indexes=${INDEXES:-artcow,permart,permart-2log,woart,wort,roart,fptree,lbtree,canary,btree-dram,stdmap}
for ds in ${DATASETS:-u64 u64-bytes names wiki urls words}; do
  n=1M; [ "$ds" = words ] && n=600K   # the word list has 663,473 words
  for t in 1 2; do
    "$bin" bench --index "$indexes" --same-index --dataset "$ds" --workload read=1,scan=1:100,insert=1 \
      -n $n -t $t --seconds ${SECONDS_PER_RUN:-1.5} --pin --no-progress --pool /dev/shm/matrix.pool --pool-size 3G \
      --json "$out/$ds-t$t.json" > "$out/$ds-t$t.txt" 2>&1 || echo "FAILED: $ds t=$t (see $out/$ds-t$t.txt)"
  done
done
rm -f /dev/shm/matrix.pool
