#!/bin/bash
# memcmp calls per byte-key lookup (callgrind, caller chains), 100K records.
out=$1; mkdir -p $out
for ds in urls; do
for i in ${INDEXES:-fptree lbtree roart permart permart-2log artcow woart wort canary btree-dram stdmap}; do
  timeout 900 valgrind --tool=callgrind --separate-callers=12 --callgrind-out-file=$out/$ds-$i.cg \
    ${BIN:-build/release/pmindex} bench --index $i --dataset $ds --workload read=1 -n 100K -t 1 --seconds 5 --no-progress \
    --pool /dev/shm/kc.pool > $out/$ds-$i.txt 2>&1
  rm -f /dev/shm/kc.pool
  ops=$(awk '$1=="read"{print $2}' $out/$ds-$i.txt | head -1)
  calls=$(python3 "$(dirname "$0")/memcmp_calls.py" $out/$ds-$i.cg)
  echo "$ds $i lookups=$ops memcmp=$calls per_lookup=$(python3 -c "print(round($calls/$ops,2))" 2>/dev/null)"
done; done
