#!/bin/sh
# WORT-family lookups without versions (issue 20): the build before #20's
# work (PRE: one reader-writer lock), main before the change (MAIN: lock
# coupling on every lookup) and the change (NEW), each run one workload from
# its own 1M prefill, 3 s, pinned, the binaries alternating run by run
# (permart_growth/fine.sh), 1 and 2 threads.
#   PRE=... MAIN=... NEW=... OUT=DIR ROUNDS=2 docs/results/wort_lookup/run.sh
# Medians: for d in DIR/*; do python3 docs/results/permart_growth/fine.py $d pre; done
set -eu
D=$(dirname "$0")/..
for t in ${THREADS_LIST:-1 2}; do for i in ${INDEXES:-wort woart artcow}; do
  THREADS=$t INDEX=$i ROUNDS=${ROUNDS:-2} WORKLOAD="${WORKLOAD:-read100 ycsb-b ycsb-a}" \
    "$D/permart_growth/fine.sh" "$OUT/$i-t$t" pre="$PRE" main="$MAIN" new="$NEW"
done; done
