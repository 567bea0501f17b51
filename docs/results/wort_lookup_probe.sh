#!/bin/bash
# Issue 20, the WORT family's 1-thread lookup regression: quick interleaved probes of several
# builds (pre = the pre-lock code at 4a4c3b5, main, and probe builds of main with parts of the
# lookup's concurrency control switched off by the macros in wort_scaling/lookup/probes.patch).
# One 3-second run per side and repetition, sides interleaved; prints Mops/s and Mops per
# thread CPU-second (the steadier one on a shared machine).
#   PRE=/work/wt/wortbase/build/release/pmindex BINS=build/bins OUT=DIR \
#   docs/results/wort_lookup_probe.sh TAG wort read100 1 2 pre main exp_plain ...
# (BINS/<side>-pmindex is the binary of each side but pre.)
set -eu
tag=$1 idx=$2 wl=$3 t=$4 reps=$5; shift 5
: "${PRE:?the pre-lock pmindex}" "${BINS:?directory of <side>-pmindex}" "${OUT:?output directory}"
mkdir -p "$OUT"
pool=/dev/shm/wort_lookup_probe-$$.pool
for r in $(seq 1 "$reps"); do for s in "$@"; do
  b=$BINS/$s-pmindex
  [ "$s" = pre ] && b=$PRE
  f=$OUT/$tag-$s-$idx-$wl-t$t-r$r.json
  "$b" bench --index "$idx" -n 1M -t "$t" --workload "$wl" --seconds 3 --no-progress --pin --pool "$pool" --json "$f" >/dev/null
  python3 -c "
import json, sys; r = json.load(open(sys.argv[1]))['results'][0]['run']
print(sys.argv[2], round(r['mops'], 3), round(r['mops_cpu'], 3))" "$f" "$s $idx $wl t$t r$r"
done; done
rm -f "$pool"
