#!/bin/bash
# ROART beside WORT, PermART, LB+-Tree: 1M records, 1 thread, read100 / scan100 / insert as phases
# of one prefill (--same-index), u64 then urls keys, interleaved (A B C D, A B C D, A B C D).
# PMINDEX=path/to/pmindex OUT=dir docs/results/roart_bench.sh; then docs/results/roart_summary.py dir
B=${PMINDEX:-build/dev/pmindex}
out=${OUT:-/tmp/roart_bench}; mkdir -p "$out"; cd "$out"; B=$(realpath "$OLDPWD/$B" 2>/dev/null || echo "$B")
for rep in 1 2 3; do
  for idx in roart wort permart lbtree; do
    $B bench --index $idx -n 1M -t 1 --workload read100,scan=1,insert=1 --same-index --seconds 3 --pin --no-progress --no-check --pool /dev/shm/roart-bench.pool --json u64-$idx-$rep.json > u64-$idx-$rep.txt 2>&1
  done
done
for rep in 1 2 3; do
  for idx in roart wort permart lbtree; do
    $B bench --index $idx -n 1M -t 1 --dataset urls --workload read100,scan=1,insert=1 --same-index --seconds 3 --pin --no-progress --no-check --pool /dev/shm/roart-bench.pool --json urls-$idx-$rep.json > urls-$idx-$rep.txt 2>&1
  done
done
echo finished
