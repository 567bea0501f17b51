#!/bin/bash
# The pmemids grid (issue 16, docs/results/pmemids.md): REPS repetitions of
#   pmindex bench --preset pmemids -n 1M --ops 1M -t 2 --pin
# (the study's 1M records of u64 keys and 100-byte values, 1M operations, every
# pmemids structure x pmemids-read / pmemids-write x dram / volatile / persist /
# tx x 1 and 2 threads, one instance per thread), one JSON per repetition, then
# the medians: docs/results/pmemids_summary.py OUT/grid*.json.
# usage: pmemids_bench.sh PMINDEX_BUILD_DIR OUT_DIR [REPS=3] [extra bench options...]
set -eu
B=$1/pmindex
O=$2; mkdir -p "$O"
reps=${3:-3}
shift 3 || shift $#
for rep in $(seq 1 "$reps"); do
  "$B" bench --preset pmemids -n 1M --ops 1M -t 2 --pin --seed "$rep" --pool /dev/shm/pmemids.pool \
    --no-progress "$@" --json "$O/grid$rep.json" > "$O/grid$rep.txt" 2>&1
done
