#!/bin/sh
# The runs behind docs/results/btree.md (FPTree, LB+-Tree vs PermART).
# Usage: docs/results/btree_bench.sh PMINDEX_BINARY OUT_DIR [RECORDS] [REPS]
# Release build: cmake -S . -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMINDEX_TESTS=OFF
set -e
bin=$1; out=$2; n=${3:-1M}; reps=${4:-3}
mkdir -p "$out"
for rep in $(seq 1 "$reps"); do
  for t in 1 2; do
    for dist in uniform selfsimilar; do
      for wl in "lookup:--read 1" "insert:--insert 1" "update:--update 1" "scan:--scan 1 --scan-size 100" \
                "r90i10:--read 0.9 --insert 0.1" "r50i50:--read 0.5 --insert 0.5" "r10i90:--read 0.1 --insert 0.9"; do
        name=${wl%%:*}; mix=${wl#*:}
        extra=""; [ "$name" = lookup ] && extra="--recover"
        # shellcheck disable=SC2086
        "$bin" bench --index fptree,lbtree,permart $mix --distribution $dist --skew 0.2 -n "$n" -t "$t" \
          --seconds 1 --seed "$rep" $extra --pool /dev/shm/f-bench.pool --no-progress \
          --json "$out/$name-$dist-t$t-r$rep.json" > "$out/$name-$dist-t$t-r$rep.txt"
      done
    done
  done
done
