#!/bin/sh
# pmindex's PermART beside the original artifact (arashctl/sigmod26-PermART,
# built in /tmp as described in artifact.md), interleaved: for every
# repetition and configuration, pmindex then the artifact, same machine
# state. Usage: compare_artifact.sh PMINDEX_BINARY OUTDIR [REPS] [CONFIGS]
# The artifact runs through artifact_run.sh (ARUN overrides its path).
set -eu
B=$1; OUT=$2; REPS=${3:-3}; CONFIGS=${4:-"a b c d e-dense e-sparse e-dense-0.1 e-sparse-0.1 e-dense-1 e-sparse-1 f"}
ARUN=${ARUN:-$(dirname "$0")/artifact_run.sh}
SECS=${SECS:-5}
mkdir -p "$OUT"
P=/dev/shm/pmindex-vs-artifact.pool
# The artifact's configurations in pmindex terms: 1M keys in a 2M universe
# (a random half prefilled), "x% updates" = x/2% inserts + x/2% removes of
# random keys (present or not), the rest lookups; range queries of width
# s x 2M in the artifact return ~s x 1M records, our --range-size.
args() {
  u="-n 1000000 --key-space 2000000 --prefill spread --inserts random -t 2 --pin"
  case $1 in
    a) echo "$u --universe dense  --read 0.95 --insert 0.025 --remove 0.025" ;;
    b) echo "$u --universe dense  --read 0.5 --insert 0.25 --remove 0.25 --distribution zipfian --theta 0.99" ;;
    c) echo "$u --universe sparse --read 0.95 --insert 0.025 --remove 0.025" ;;
    d) echo "$u --universe sparse --read 0.5 --insert 0.25 --remove 0.25" ;;
    e-*) uni=dense; case $1 in *sparse*) uni=sparse ;; esac
         size=100; case $1 in *-0.1) size=1000 ;; *-1) size=10000 ;; esac
         echo "$u --universe $uni --read 0.5 --insert 0.25 --remove 0.25 --range-threads 1 --range-size $size" ;;
    f) echo "-n 10000000 --key-space 20000000 --prefill spread --inserts random -t 2 --pin --universe dense --read 0.05 --insert 0.475 --remove 0.475" ;;
  esac
}
for rep in $(seq 1 "$REPS"); do
  for c in $CONFIGS; do
    for v in permart 2log; do
      idx=permart; [ $v = 2log ] && idx=permart-2log
      rm -f $P
      # shellcheck disable=SC2046
      "$B" bench --index $idx $(args "$c") --seconds "$SECS" --seed "$rep" --pool $P --no-progress \
        --json "$OUT/pmindex-$c-$v-r$rep.json" > "$OUT/pmindex-$c-$v-r$rep.txt" 2>&1 || echo "pmindex $c $v failed"
      rm -f $P
      VARIANT=$v T_MS=$((SECS * 1000)) "$ARUN" "$c" > "$OUT/artifact-$c-$v-r$rep.txt" 2>&1 || echo "artifact $c $v failed"
    done
  done
done
