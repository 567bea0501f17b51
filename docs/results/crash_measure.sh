#!/bin/bash
# Crash-checker figures per index (docs/results/crash_checker.md): the CI runs
# of tests/crash/crashtests.cmake (random, exhaustive, 2 and 4 threads) timed
# one after the other on an otherwise idle machine, then JSON.
# usage: crash_measure.sh PMINDEX_BINARY OUT.json
set -eu
B=$1 OUT=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo '{"command": "docs/results/crash_measure.sh <test-build pmindex> docs/results/crash_checker_ci.json", "runs": [' > "$tmp/j"
first=1
for idx in canary fptree lbtree wort woart artcow permart permart-2log; do
  extra=()
  [ $idx = fptree ] && extra=(--params leaf=4,inner=3)
  [ $idx = lbtree ] && extra=(--params inner=3)
  for kind in random exhaustive threads2 threads4; do
    case $kind in
      random) a=(--images 2500 --ops 2500 --seed 1) ;;
      exhaustive) a=(--exhaustive --ops 50 --keys 16 --seed 2) ;;
      threads2) a=(--threads 2 --images 600 --ops 400 --seed 3) ;;
      threads4) a=(--threads 4 --images 600 --ops 400 --keyset shared --keys 32 --seed 4) ;;
    esac
    t0=$(date +%s.%N)
    "$B" crashtest --index $idx "${extra[@]}" "${a[@]}" > "$tmp/out" 2> "$tmp/err" || true
    line=$(grep -E '^crashtest [^ ]+: [0-9]+ images, [0-9]+ violations$' "$tmp/out")
    parked=$(sed -nE 's/.*: ([0-9]+) images taken with every other thread parked.*/\1/p' "$tmp/err")
    t1=$(date +%s.%N)
    images=$(sed -E 's/.*: ([0-9]+) images, ([0-9]+) violations.*/\1/' <<< "$line")
    viol=$(sed -E 's/.*: ([0-9]+) images, ([0-9]+) violations.*/\2/' <<< "$line")
    secs=$(python3 -c "print(round($t1 - $t0, 2))")
    echo "$idx $kind: $images images, $viol violations, $secs s"
    [ $first = 1 ] || echo ',' >> "$tmp/j"; first=0
    echo "{\"index\": \"$idx\", \"run\": \"$kind\", \"args\": \"${extra[*]} ${a[*]}\", \"images\": $images, \"violations\": $viol, \"wall_s\": $secs, \"images_per_s\": $(python3 -c "print(round($images / $secs))")${parked:+, \"images_all_others_parked\": $parked}}" >> "$tmp/j"
  done
done
echo ']}' >> "$tmp/j"
python3 -c "import json,sys; d=json.load(open('$tmp/j')); json.dump(d, open('$OUT','w'), indent=1)"
