#!/bin/sh
# PermART, binaries side by side, interleaved per run (finer than ab.sh: each
# run one workload from its own prefill, the binaries alternating run by
# run), 1 thread, 1M u64 records, 3 s, pinned.
#   ROUNDS=5 docs/results/permart_growth/fine.sh DIR label=BIN ...
# (FIRST=K: start at round K, to add rounds to a directory; PARAMS=...: the
# index's --params, e.g. PARAMS=keys=bytes)
# Medians: python3 docs/results/permart_growth/fine.py DIR
set -eu
OUT=$1; shift; mkdir -p "$OUT"
W=${WORKLOAD:-read100 read=0.5+update=0.5 insert=1 scan=1:100}
# The binaries take turns at going first: round r starts at binary r mod n
# (session 53: one pair measured in both orders gave 0.90 and 1.17; an A/A
# run of one binary twice showed no order effect, but noise of +-10% per
# pair, so an order that never changes can hide in the median).
n=$#
for r in $(seq "${FIRST:-1}" "${ROUNDS:-5}"); do for w in $W; do
  k=$((r % n)); i=0; order=""
  for lb in "$@"; do [ $i -ge $k ] && order="$order $lb"; i=$((i + 1)); done
  i=0; for lb in "$@"; do [ $i -lt $k ] && order="$order $lb"; i=$((i + 1)); done
  for lb in $order; do
  l=${lb%%=*}; b=${lb#*=}; f=$(echo "$w" | tr : _)  # (no ':' in file names: Windows checkouts)
  rm -f /dev/shm/pmfine.pool
  "$b" bench --index "${INDEX:-permart}" -n "${N:-1M}" -t "${THREADS:-1}" --workload "$w" --seconds 3 --pin ${PARAMS:+--params "$PARAMS"} \
    --no-progress --no-check --seed "$r" --pool /dev/shm/pmfine.pool --json "$OUT/$l-$f-r$r.json" > /dev/null 2>&1 ||
    echo "failed: $l $w r$r (a binary without this index or workload, or too small a pool)" >&2
done; done; done
rm -f /dev/shm/pmfine.pool
