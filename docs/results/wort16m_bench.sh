#!/bin/bash
# WORT-family measurements at the paper's scale, 16M keys (docs/results/wort.md, "16M keys").
# usage: wort16m_bench.sh PMINDEX_BUILD_DIR OUT_DIR [REPS=3] [KEYS=16M]
# Per repetition, key universe and media latency: one `pmindex bench` that
# prefills each index with KEYS keys in random order (one thread), then, on
# that same index, 2 s of uniform point searches and 2 s each of range queries
# of 0.001% and 0.01% of the keys (167 and 1677 at 16M = 16,777,216). With --pm-write-ns
# 300 only the searches run (scans do not flush, so they would repeat the
# first figures). Repetitions are the outer loop, so a slow spell of the
# machine hits one repetition of everything, not every run of one index.
set -eu
B=$1/pmindex
O=$2; mkdir -p "$O"
reps=${3:-3}
keys=${4:-16M}
IDX=wort,woart,artcow,permart,fptree
n=$(python3 -c "s='$keys'; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))")
r1=$((n / 100000)); r2=$((n / 10000))        # 0.001% and 0.01% of the keys
for rep in $(seq 1 "$reps"); do
  for u in dense sparse clustered; do
    common=(--index $IDX --same-index -n "$keys" -t 1 --seconds 2 --universe "$u" --seed "$rep"
            --pool /dev/shm/wort16m.pool --no-progress)
    "$B" bench "${common[@]}" --workload "read=1,scan=1:$r1,scan=1:$r2" \
      --json "$O/r$rep-$u.json" > "$O/r$rep-$u.txt" 2>&1
    "$B" bench "${common[@]}" --workload read=1 --pm-write-ns 300 \
      --json "$O/r$rep-$u-w300.json" > "$O/r$rep-$u-w300.txt" 2>&1
  done
done
