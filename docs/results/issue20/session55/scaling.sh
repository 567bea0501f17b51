#!/bin/sh
# 2t/1t of #20's scaling target, each run from its own 1M prefill, 1 and 2
# threads taking turns at going first, 3 s, pinned (session 37's recheck).
#   BIN=.../pmindex INDEXES='artcow woart' ROUNDS=5 scaling.sh DIR
# Medians and ratios: python3 docs/results/issue20/session55/scaling.py DIR
set -eu
OUT=$1; mkdir -p "$OUT"
for r in $(seq 1 "${ROUNDS:-5}"); do for i in ${INDEXES:-artcow woart}; do for w in ${WORKLOAD:-ycsb-a ycsb-b}; do
  if [ $((r % 2)) = 1 ]; then ts="1 2"; else ts="2 1"; fi
  for t in $ts; do
    rm -f /dev/shm/pmscale.pool
    "$BIN" bench --index "$i" -n "${N:-1M}" -t "$t" --workload "$w" --seconds 3 --pin --no-progress --no-check \
      --seed "$r" --pool /dev/shm/pmscale.pool --json "$OUT/${i}_$w-t$t-r$r.json" > /dev/null 2>&1 || echo "failed: $i $w t$t r$r" >&2
done; done; done; done
rm -f /dev/shm/pmscale.pool
