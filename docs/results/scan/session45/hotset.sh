#!/bin/sh
# A scan100 over a hot set (100 start keys of 1M, ~10K records read over and
# over: what the walk costs with its lines in cache) beside the uniform
# scan100 (what the misses add), one build, indexes in turn, ROUNDS rounds.
#   ROUNDS=2 docs/results/scan/session45/hotset.sh PMINDEX DIR
# Table: python3 docs/results/scan/session45/hotset.py DIR
set -u
P=$1 OUT=$2; mkdir -p "$OUT"
IDX=${INDEXES:-btree-dram fptree lbtree utree pactree pmasstree dptree woart artcow wort roart permart permart-2log}
for r in $(seq 1 "${ROUNDS:-2}"); do for i in $IDX; do for d in hot uniform; do
  set -- --distribution uniform
  [ "$d" = hot ] && set -- --distribution selfsimilar --skew 0.0001
  rm -f /dev/shm/pmhot.pool
  "$P" bench --index "$i" -n 1M -t 1 --workload scan=1:100 "$@" --seconds 3 --pin --no-progress --no-check \
    --seed "$r" --pool /dev/shm/pmhot.pool --json "$OUT/$i-$d-r$r.json" > /dev/null 2>&1 || echo "failed: $i $d r$r" >&2
done; done; done
rm -f /dev/shm/pmhot.pool
