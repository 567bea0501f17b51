#!/bin/bash
# The pmemids study's "concurrent contention" mode: one instance behind one
# lock, the lock in DRAM (a std::mutex) or in the pool (a spin lock on a pool
# word), 2 threads, persist mode, the study's records (1M, 100-byte values).
# REPS repetitions, the two locks back to back in each; then the ratios.
# usage: pmemids_lock.sh PMINDEX_BUILD_DIR OUT_DIR [REPS=3] [INDEXES=hashtable,bplustree,skiplist]
set -eu
B=$1/pmindex
O=$2; mkdir -p "$O"
reps=${3:-3}
idx=${4:-hashtable,bplustree,skiplist}
for rep in $(seq 1 "$reps"); do
  for lock in dram pool; do
    "$B" bench --index "$idx" --workload pmemids-read,pmemids-write --parallel global-lock --lock "$lock" \
      -t 2 -n 1M --ops 1M --value-size 100 --mode persist --pin --seed "$rep" --pool /dev/shm/pmemids-lock.pool \
      --no-progress --json "$O/r$rep-$lock.json" > "$O/r$rep-$lock.txt" 2>&1
  done
done
python3 - "$O" "$reps" <<'PY'
import json, statistics, sys
o, reps = sys.argv[1], int(sys.argv[2])
k = {}
for rep in range(1, reps + 1):
    for lock in ("dram", "pool"):
        for r in json.load(open(f"{o}/r{rep}-{lock}.json"))["results"]:
            k.setdefault((r["index"], r["workload"], lock), []).append(r["run"]["mops"] * 1000)
print("| index | workload | lock dram KTPS | lock pool KTPS | pool/dram (median of per-rep ratios) |")
print("|---|---|---|---|---|")
for (i, w, lock) in sorted(k):
    if lock != "dram":
        continue
    d, p = k[(i, w, "dram")], k[(i, w, "pool")]
    ratio = statistics.median(b / a for a, b in zip(d, p))
    print(f"| {i} | {w} | {statistics.median(d):.0f} | {statistics.median(p):.0f} | {ratio:.2f} |")
PY
