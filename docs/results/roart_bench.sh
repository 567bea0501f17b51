#!/bin/bash
# ROART beside WORT, PermART, LB+-Tree: 1M records, 1 thread, read100 / scan100 / insert as phases
# of one prefill (--same-index), u64 then urls keys, interleaved (A B C D, A B C D, A B C D).
# PMINDEX=path/to/pmindex OUT=dir docs/results/roart_bench.sh; then docs/results/roart_summary.py dir
# Other comparisons set INDEXES, DATASETS, THREADS, N, WORKLOAD, REPS, EXTRA (more bench options)
# and TAG (a file name prefix) (PACTree: pactree_bench.sh).
B=${PMINDEX:-build/dev/pmindex}
out=${OUT:-/tmp/roart_bench}; mkdir -p "$out"; cd "$out"; B=$(realpath "$OLDPWD/$B" 2>/dev/null || echo "$B")
for ds in ${DATASETS:-u64 urls}; do
  dsarg=""; [ "$ds" != u64 ] && dsarg="--dataset $ds"
  for t in ${THREADS:-1}; do
    sfx=""; [ -n "$THREADS" ] && sfx="-t$t"
    for rep in $(seq 1 ${REPS:-3}); do
      for idx in ${INDEXES:-roart wort permart lbtree}; do
        $B bench --index $idx -n ${N:-1M} -t $t $dsarg --workload ${WORKLOAD:-read100,scan=1,insert=1} --same-index \
          --seconds 3 --pin --no-progress --no-check --pool /dev/shm/roart-bench.pool \
          $EXTRA --json $TAG$ds-$idx$sfx-$rep.json > $TAG$ds-$idx$sfx-$rep.txt 2>&1
      done
    done
  done
done
echo finished
