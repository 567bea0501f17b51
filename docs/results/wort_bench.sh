#!/bin/bash
# WORT-family measurements (docs/results/wort.md)
B=${1:-build/e-rel}/pmindex
IDX=wort,woart,artcow,permart,fptree,canary
O=${2:-/tmp/wort-bench}; mkdir -p $O
for u in dense sparse clustered; do
  $B bench --index $IDX --workload read100 -n 1M -t 1 --seconds 1 --universe $u --pool /dev/shm/e-bench.pool --no-progress --json $O/$u-read.json > $O/$u-read.txt 2>&1
  for s in 10 100; do
    $B bench --index $IDX --workload read100 --read 0 --scan 1 --scan-size $s -n 1M -t 1 --seconds 1 --universe $u --pool /dev/shm/e-bench.pool --no-progress --json $O/$u-scan$s.json > $O/$u-scan$s.txt 2>&1
  done
  $B bench --index $IDX --workload read100 -n 1M -t 1 --seconds 1 --universe $u --pm-write-ns 300 --pool /dev/shm/e-bench.pool --no-progress --json $O/$u-read-w300.json > $O/$u-read-w300.txt 2>&1
done

