#!/bin/sh
# PermART measurements (docs/results/permart.md). Release build, no test build:
#   cmake -S . -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMINDEX_TESTS=OFF && ninja -C build/rel pmindex
# Usage: measure.sh PMINDEX_BINARY OUTDIR
set -eu
B=$1; OUT=$2; mkdir -p "$OUT"
P=/dev/shm/pmindex-permart-measure.pool
run() { name=$1; shift; rm -f $P; "$B" bench --index permart --pool $P --no-progress --json "$OUT/$name.json" "$@" > "$OUT/$name.txt" 2>&1 || echo "$name failed"; rm -f $P; }
# The point workloads: 1M keys in a 2M universe, 2 threads; "updates" = half inserts, half removes.
run dense_5   --universe dense  -n 1M --key-space 2M --read 0.95 --insert 0.025 --remove 0.025 -t 2 --seconds 3
run dense_50z --universe dense  -n 1M --key-space 2M --read 0.5 --insert 0.25 --remove 0.25 --distribution zipfian --theta 0.99 -t 2 --seconds 3
run sparse_5  --universe sparse -n 1M --key-space 2M --read 0.95 --insert 0.025 --remove 0.025 -t 2 --seconds 3
run sparse_50 --universe sparse -n 1M --key-space 2M --read 0.5 --insert 0.25 --remove 0.25 -t 2 --seconds 3
# Updates in place (leaf copy-on-write) and scans beside 50% updates.
run dense_update  --universe dense  -n 1M --update 1 -t 2 --seconds 3
run sparse_update --universe sparse -n 1M --update 1 -t 2 --seconds 3
run dense_scan100  --universe dense  -n 1M --key-space 2M --scan 0.1 --insert 0.45 --remove 0.45 --scan-size 100 -t 2 --seconds 3
run sparse_scan100 --universe sparse -n 1M --key-space 2M --scan 0.1 --insert 0.45 --remove 0.45 --scan-size 100 -t 2 --seconds 3
# Recovery time (clean reopen, and dirty reopen = recovery walk + tracing rebuild).
run recover_3M  --universe sparse -n 3M  --read 1 -t 2 --seconds 0.5 --recover
run recover_10M --universe sparse -n 10M --read 1 -t 2 --seconds 0.5 --recover
# The same index in dram mode (volatile versioned ART): what persistence costs.
run dram_dense_5     --mode dram --universe dense  -n 1M --key-space 2M --read 0.95 --insert 0.025 --remove 0.025 -t 2 --seconds 3
run dram_sparse_50   --mode dram --universe sparse -n 1M --key-space 2M --read 0.5 --insert 0.25 --remove 0.25 -t 2 --seconds 3
run dram_sparse_update --mode dram --universe sparse -n 1M --update 1 -t 2 --seconds 3
# PermART (2-Log): logged updates.
run2() { name=$1; shift; rm -f $P; "$B" bench --index permart-2log --pool $P --no-progress --json "$OUT/$name.json" "$@" > "$OUT/$name.txt" 2>&1 || echo "$name failed"; rm -f $P; }
run2 log_sparse_update --universe sparse -n 1M --update 1 -t 2 --seconds 3
run2 log_sparse_50     --universe sparse -n 1M --key-space 2M --read 0.5 --insert 0.25 --remove 0.25 -t 2 --seconds 3
run2 log_dense_5       --universe dense  -n 1M --key-space 2M --read 0.95 --insert 0.025 --remove 0.025 -t 2 --seconds 3
run2 log_recover_3M    --universe sparse -n 3M --read 1 -t 2 --seconds 0.5 --recover
