#!/bin/sh
# The runs behind docs/results/btree.md (FPTree, LB+-Tree vs PermART).
# Usage: docs/results/btree_bench.sh PMINDEX_BINARY OUT_DIR [RECORDS] [REPS]
# Release build: cmake -S . -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMINDEX_TESTS=OFF
# Each invocation prefills each index once and runs the seven workloads as
# phases on it (--same-index): read-only and update first, inserts last, so
# the key set grows only in the last three phases; --recover after the last.
set -e
bin=$1; out=$2; n=${3:-10M}; reps=${4:-3}
mkdir -p "$out"
wls="read=1,update=1,scan=1,read=0.9+insert=0.1,read=0.5+insert=0.5,read=0.1+insert=0.9,insert=1"
for rep in $(seq 1 "$reps"); do
  for t in 1 2; do
    for dist in uniform selfsimilar; do
      "$bin" bench --index fptree,lbtree,permart --same-index --workload "$wls" --scan-size 100 \
        --distribution $dist --skew 0.2 -n "$n" -t "$t" --seconds 1 --seed "$rep" --recover \
        --pool /dev/shm/btree-bench.pool --no-progress \
        --json "$out/$dist-t$t-r$rep.json" > "$out/$dist-t$t-r$rep.txt"
    done
  done
done
