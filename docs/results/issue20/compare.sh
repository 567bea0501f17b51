#!/bin/sh
# `pmindex compare` of each old/new pair of run.sh's JSON (the issue's
# "pmindex compare against the previous release"), cut to the figures #20
# asks for: Mops/s, flushes/fences/allocations per op, p99.
#   docs/results/issue20/compare.sh PMINDEX 1m > docs/results/issue20/compare/1m.txt
set -eu
P=$1; D=docs/results/issue20/$2
for A in "$D"/old-*.json; do
  B=$D/new-${A##*/old-}
  [ -f "$B" ] || continue
  echo "\$ pmindex compare $A $B"
  "$P" compare "$A" "$B" | grep -E '^[a-z]|figure|run\.(mops|flushes_per_op|fences_per_op|allocs_per_op|latency_ns\.p99) '
  echo
done
