#!/usr/bin/env bash
# Run ONE configuration of the original PermART artifact (sigmod26-PermART,
# setbench-based driver microbench/main.cpp) once and print the driver output.
# The build lives in /tmp/permart-artifact (see docs/results/permart/artifact.md); nothing
# here touches /work/main.
#
# usage: artifact_run.sh <config> 
#   config: a | b | c | d | f
#           e-dense | e-sparse            (1 RQ thread, 0.01% selectivity)
#           e-dense-0.1 | e-sparse-0.1    (0.1%)
#           e-dense-1 | e-sparse-1        (1%)
#           e  (= e-dense)
# env overrides:
#   VARIANT=permart|2log   (default permart = CMake target Variation2;
#                           2log = Variation5, "PermART-2Log")
#   T_MS=<ms>              measured phase length (default 5000; paper: 8000 point ops, 30000 RQ)
#   NWORK, NRQ, NPREFILL   thread counts (defaults: 2 workers, 0 RQ; for e-*: 1 worker + 1 RQ)
#   PIN=<list>             setbench -pin list (default 0,1 when total threads <= 2, else no pinning)
#   EXTRA="..."            extra driver args appended verbatim
set -euo pipefail

ART=/tmp/permart-artifact
VARIANT=${VARIANT:-permart}
case "$VARIANT" in
  permart) BIN=$ART/build-Variation2/ds/04-artifact/Variation2 ;;
  2log)    BIN=$ART/build-Variation5/ds/04-artifact/Variation5 ;;
  *) echo "unknown VARIANT=$VARIANT (permart|2log)" >&2; exit 2 ;;
esac
[ -x "$BIN" ] || { echo "binary $BIN not built" >&2; exit 2; }

cfg=${1:-}
[ -n "$cfg" ] || { sed -n 2,19p "$0"; exit 2; }

T_MS=${T_MS:-5000}
K=2000000; PREFILL=1000000          # 1M keys in a 2M-key universe
DIST="";  SPARSE="";  I=2.5; D=2.5
NWORK_DEF=2; NRQ_DEF=0; RQSIZE=0

case "$cfg" in
  a) I=2.5; D=2.5 ;;                                   # dense, 5% updates, uniform
  b) I=25;  D=25; DIST="-dist-zipf-ycsb 0.99" ;;        # dense, 50% updates, YCSB zipf 0.99
  c) I=2.5; D=2.5; SPARSE="-sparse" ;;                 # sparse, 5% updates, uniform
  d) I=25;  D=25;  SPARSE="-sparse" ;;                 # sparse, 50% updates, uniform
  e|e-dense|e-sparse|e-dense-0.01|e-sparse-0.01|e-dense-0.1|e-sparse-0.1|e-dense-1|e-sparse-1)
     I=25; D=25; NWORK_DEF=1; NRQ_DEF=1
     case "$cfg" in *sparse*) SPARSE="-sparse" ;; esac
     case "$cfg" in
       *-0.1) RQSIZE=$((K / 1000)) ;;    # 0.1%  of the universe = 2000 universe keys
       *-1)   RQSIZE=$((K / 100)) ;;     # 1%                      = 20000
       *)     RQSIZE=$((K / 10000)) ;;   # 0.01%                   = 200
     esac ;;
  f) K=20000000; PREFILL=10000000; I=47.5; D=47.5 ;;   # 10M keys / 20M universe, 95% updates, dense uniform
  *) echo "unknown config '$cfg'" >&2; exit 2 ;;
esac

NWORK=${NWORK:-$NWORK_DEF}
NRQ=${NRQ:-$NRQ_DEF}
NPREFILL=${NPREFILL:-2}
TOTAL=$((NWORK + NRQ))
if [ -z "${PIN+x}" ]; then
  if [ "$TOTAL" -le "$(nproc)" ]; then PIN=$(seq -s, 0 $((TOTAL - 1))); else PIN=""; fi
fi
PINARG=""; [ -n "$PIN" ] && PINARG="-pin $PIN"

CMD="$BIN -nprefill $NPREFILL -nwork $NWORK -nrq $NRQ -rqsize $RQSIZE -niter 0 -i $I -d $D -k $K -prefillsize $PREFILL -prefill-insert $PINARG -t $T_MS $DIST $SPARSE ${EXTRA:-}"

# Ralloc heap files (compiled with SHM_SIMULATING -> /dev/shm/<id>_{basemd,desc,sb}, id=ralloc_art).
# If they exist, Ralloc takes its *restart/recovery* path, so they must be removed before every run.
# Serialize runs: all runs share the same heap file names.
exec 9>"$ART/run.lock"
flock 9
rm -f /dev/shm/ralloc_art_basemd /dev/shm/ralloc_art_desc /dev/shm/ralloc_art_sb
trap 'rm -f /dev/shm/ralloc_art_basemd /dev/shm/ralloc_art_desc /dev/shm/ralloc_art_sb' EXIT

echo "# config=$cfg variant=$VARIANT date=$(date -u +%FT%TZ)"
echo "# cmd: $CMD"
OUT=$(mktemp /tmp/permart-artifact/run-XXXXXX.log)
set +e
timeout 1200 $CMD > "$OUT" 2>&1
rc=$?
set -e
cat "$OUT"
echo
echo "# ===== SUMMARY config=$cfg variant=$VARIANT rc=$rc ====="
grep -E '^(MAXKEY|IS_SPARSE|INS_DEL_FRAC|RQSIZE|WORK_THREADS|RQ_THREADS|distribution|pref_size|prefill_elapsed_ms|final_size|validate_result|total_find|total_rq|total_updates|total_ops|find_throughput|rq_throughput_float|update_throughput|query_throughput|total_throughput|sum_cacheline_flushes_total)=' "$OUT" || true
grep -E '^elapsed milliseconds' "$OUT" || true
rm -f "$OUT"
exit $rc
