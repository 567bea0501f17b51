#!/bin/bash
# The measurement of docs/results/python.md: three interleaved rounds of the
# Python binding (python_overhead.py, pip-installed release wheel in a venv)
# and the C++ calls through `pmindex bench` (a release binary), same index
# (permart, persist), 1M random 64-bit keys, one thread.
#   PY=<venv>/bin/python B=<release pmindex> docs/results/python/run.sh OUTDIR
set -e
PY=${PY:-python3}
B=${B:-build/release/pmindex}
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1" && cd "$1"
for i in 1 2 3; do
  $PY "$HERE/python_overhead.py" py_$i.json --reps 1
  $B bench --index permart -n 1M -t 1 --workload read100 --seconds 3 --universe sparse --pin --no-progress \
    --pool /dev/shm/ovh.pool --json cpp_read_$i.json > /dev/null
  $B bench --index permart -n 1M -t 1 --workload scan=1:100 --seconds 3 --universe sparse --pin --no-progress \
    --pool /dev/shm/ovh.pool --json cpp_scan_$i.json > /dev/null
done
