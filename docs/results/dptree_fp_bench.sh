#!/bin/bash
# DPTree before and after the base-leaf fingerprints (issue 15), FPTree as the reference: 1M
# records, 1 thread, read100 / ycsb-b / scan100 / ycsb-e / insert as phases of one prefill
# (--same-index), u64 (sparse 64-bit keys) then urls, interleaved run by run (main's dptree,
# this branch's dptree, fptree; A B C, A B C, A B C). Then (BIG=1) read100 at 10M, u64, A B A B A B.
# MAIN=main's pmindex NEW=this branch's pmindex OUT=dir docs/results/dptree_fp_bench.sh
main=$(realpath "${MAIN:?main binary}"); new=$(realpath "${NEW:?new binary}")
out=${OUT:-/tmp/dptree_fp_bench}; mkdir -p "$out"; cd "$out" || exit 1
pool=/dev/shm/dptree-fp-bench.pool
run() {  # binary index dataset-args n workload json
  rm -f $pool
  $1 bench --index $2 -n $4 -t 1 $3 --workload $5 --same-index --seconds 3 --pin --no-progress --no-check \
    --pool $pool --json $6 > ${6%.json}.txt 2>&1
}
wl=read100,ycsb-b,scan=1:100,ycsb-e,insert=1
for ds in ${DATASETS:-u64 urls}; do
  dsarg=""; [ "$ds" != u64 ] && dsarg="--dataset $ds"
  for rep in $(seq 1 ${REPS:-3}); do
    run "$main" dptree "$dsarg" 1M $wl $ds-dptree-main-$rep.json
    run "$new" dptree "$dsarg" 1M $wl $ds-dptree-fp-$rep.json
    run "$new" fptree "$dsarg" 1M $wl $ds-fptree-$rep.json
  done
done
if [ -n "$BIG" ]; then
  for rep in $(seq 1 ${REPS:-3}); do
    run "$main" dptree "" 10M read100 10m-dptree-main-$rep.json
    run "$new" dptree "" 10M read100 10m-dptree-fp-$rep.json
  done
fi
rm -f $pool
echo finished
