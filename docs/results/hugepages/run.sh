#!/bin/sh
# The same binary with its pool on /dev/shm (4 KiB pages) and on a tmpfs
# mounted with huge=always (2 MiB pages: what a DAX pool on real persistent
# memory usually gets), alternating run by run; each run one workload from
# its own prefill, 3 s, pinned.
#   BIN=build/release/pmindex INDEXES="fptree woart" N=1M ROUNDS=3 \
#     docs/results/hugepages/run.sh OUT
# Needs root once: mkdir -p /mnt/hshm && mount -t tmpfs -o huge=always,size=8G tmpfs /mnt/hshm
# Medians: python3 docs/results/permart_growth/fine.py OUT/INDEX 4k
set -eu
OUT=$1; mkdir -p "$OUT"
W=${WORKLOAD:-scan=1:100 read100}
for r in $(seq 1 "${ROUNDS:-3}"); do for i in ${INDEXES:-fptree woart}; do for w in $W; do
  for lp in 4k=/dev/shm/pmhuge.pool 2m=/mnt/hshm/pmhuge.pool; do
    l=${lp%%=*}; p=${lp#*=}; f=$(echo "$w" | tr : _)  # (no ':' in file names: Windows checkouts)
    mkdir -p "$OUT/$i"
    rm -f "$p"
    "${BIN:-build/release/pmindex}" bench --index "$i" -n "${N:-1M}" -t 1 --workload "$w" --seconds 3 --pin \
      --no-progress --no-check --seed "$r" --pool "$p" --json "$OUT/$i/$l-$f-r$r.json" > /dev/null 2>&1
    rm -f "$p"
  done
done; done; done
