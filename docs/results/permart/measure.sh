#!/bin/sh
# PermART's own figures beside the artifact comparison (docs/results/permart.md):
# recovery time at 3M and 10M keys, and what persistence costs an update
# (the same runs in dram mode). Three repetitions each; medians by summarize.py.
# Release build: cmake -S . -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMINDEX_TESTS=OFF
# Usage: measure.sh PMINDEX_BINARY OUTDIR [REPS]
set -eu
B=$1; OUT=$2; REPS=${3:-3}; mkdir -p "$OUT"
P=/dev/shm/pmindex-permart-measure.pool
run() { name=$1; shift; rm -f $P; "$B" bench --pool $P --no-progress --json "$OUT/$name.json" "$@" > "$OUT/$name.txt" 2>&1 || echo "$name failed"; rm -f $P; }
for r in $(seq 1 "$REPS"); do
  # Recovery: clean reopen, and reopen after a simulated crash (repair walk + tracing).
  run recover_3M-r$r  --index permart,permart-2log --universe sparse -n 3000000  --read 1 -t 2 --seconds 0.5 --recover --seed $r
  run recover_10M-r$r --index permart,permart-2log --universe sparse -n 10000000 --read 1 -t 2 --seconds 0.5 --recover --seed $r
  # Updates of present keys (leaf copy-on-write or log append), persist and dram.
  run update_persist-r$r --index permart,permart-2log --universe sparse -n 1000000 --update 1 -t 1 --seconds 2 --seed $r
  run update_dram-r$r --mode dram --index permart,permart-2log --universe sparse -n 1000000 --update 1 -t 1 --seconds 2 --seed $r
done
