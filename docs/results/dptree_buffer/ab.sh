#!/bin/sh
# DPTree (or INDEX), an OLD binary against a NEW one, interleaved: ROUNDS
# rounds x {1, 2 threads} x {old, new}, N u64 records, the phases of WORKLOAD
# on one prefill. EXTRA: more bench options. Medians: docs/results/dptree_buffer/summary.py DIR
#   docs/results/dptree_buffer/ab.sh OLD NEW DIR
# (session 31: the buffer as std::map against abseil's btree_map, 3 rounds,
# the defaults; session 33: the striped log, dptree.md "The striped log";
# session 34: PermART's in-place growth, INDEX=permart, permart.md).
set -eu
OLD=$1; NEW=$2; OUT=$3; mkdir -p "$OUT"
W=${WORKLOAD:-read100,insert=1,update=1,read=0.5+update=0.5,scan=1:100}
# SEPARATE=1: each workload of WORKLOAD from its own prefill (files *-wK.json),
# so no phase runs on what an earlier phase left (inserts that ran faster
# leave a larger index for the phases after them).
for r in $(seq 1 "${ROUNDS:-3}"); do for t in ${THREADS:-1 2}; do for b in old new; do
  eval bin=\$$(echo "$b" | tr a-z A-Z)
  if [ -n "${SEPARATE:-}" ]; then ws=$(echo "$W" | tr , ' '); else ws=$W; fi
  k=0
  for w in $ws; do
    k=$((k + 1)); sfx=""; [ -n "${SEPARATE:-}" ] && sfx="-w$k"
    rm -f /dev/shm/dpab.pool
    "$bin" bench --index "${INDEX:-dptree}" -n "${N:-1M}" -t $t --workload "$w" \
      --same-index --seconds 3 --pin --no-progress --no-check --seed $r --pool /dev/shm/dpab.pool ${EXTRA:-} \
      --json "$OUT/$b-t$t-r$r$sfx.json" > "$OUT/$b-t$t-r$r$sfx.txt" 2>&1
  done
done; done; done
rm -f /dev/shm/dpab.pool
