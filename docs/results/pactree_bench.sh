#!/bin/bash
# PACTree beside PermART, FPTree, LB+-Tree and ROART (issue 14's Measure): interleaved runs of
# roart_bench.sh with these indexes, 1 and 2 threads, u64 / words / urls keys, then the same
# with the self-similar 80/20 distribution. N=10M for the big runs.
# PMINDEX=path/to/pmindex OUT=dir docs/results/pactree_bench.sh; then docs/results/roart_summary.py dir
here=$(dirname "$0")
export INDEXES=${INDEXES:-pactree permart fptree lbtree roart} THREADS=${THREADS:-1 2} REPS=${REPS:-2}
export DATASETS=${DATASETS:-u64 words urls}
export WORKLOAD=${WORKLOAD:-read100,insert=1,update=1,read=0.5+update=0.5,scan=1:100}
"$here/roart_bench.sh"
EXTRA="--distribution selfsimilar" TAG=ss- DATASETS=u64 "$here/roart_bench.sh"
