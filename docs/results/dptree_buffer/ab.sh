#!/bin/sh
# DPTree, an OLD binary against a NEW one, interleaved: ROUNDS rounds x {1, 2
# threads} x {old, new}, N u64 records, the phases of WORKLOAD on one prefill.
# EXTRA: more bench options. Medians: docs/results/dptree_buffer/summary.py DIR
#   docs/results/dptree_buffer/ab.sh OLD NEW DIR
# (session 31: the buffer as std::map against abseil's btree_map, 3 rounds,
# the defaults; session 33: the striped log, dptree.md "The striped log").
set -eu
OLD=$1; NEW=$2; OUT=$3; mkdir -p "$OUT"
W=${WORKLOAD:-read100,insert=1,update=1,read=0.5+update=0.5,scan=1:100}
for r in $(seq 1 "${ROUNDS:-3}"); do for t in ${THREADS:-1 2}; do for b in old new; do
  eval bin=\$$(echo "$b" | tr a-z A-Z)
  rm -f /dev/shm/dpab.pool
  "$bin" bench --index dptree -n "${N:-1M}" -t $t --workload "$W" \
    --same-index --seconds 3 --pin --no-progress --no-check --seed $r --pool /dev/shm/dpab.pool ${EXTRA:-} \
    --json "$OUT/$b-t$t-r$r.json" > "$OUT/$b-t$t-r$r.txt" 2>&1
done; done; done
rm -f /dev/shm/dpab.pool
