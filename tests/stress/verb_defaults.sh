#!/usr/bin/env bash
# Every verb with its defaults works for every registered index (`pmindex
# list --json`): load, verify, bench, crashtest, stress and damagetest are
# run with the index's default parameters, pools, modes and values, only
# shortened (fewer keys, images, cases, seconds; smaller pools). A verb that
# needs what an index does not have answers with its one-line refusal and
# exit code: a volatile index has no pool to load, verify, crash or damage
# (2, or 12 for crashtest's missing persist mode); `null`, the harness's
# baseline that stores nothing, runs under bench only.
# usage: verb_defaults.sh PMINDEX
set -u
PM=$1
DIR=$(mktemp -d /dev/shm/pmindex-verb-defaults.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
export PMINDEX_POOL="$DIR/default.pool"  # never the shared default pool
# Pools of 64M rather than the default 1G (256M for the arraylist, whose
# default array takes 154 MB): creating one reserves (fallocate) and zeroes
# all of it, 0.3 s for 1G, against runs of 0.05 s here, 150 times over.
pool_size() { if [ "$1" = arraylist ]; then echo 256M; else echo 64M; fi; }
fails=0 runs=0
# run WANT ARGS...: `pmindex ARGS` exits WANT; a refusal (WANT > 1) is one line.
run() {
  local want=$1; shift
  runs=$((runs + 1))
  timeout 600 "$PM" "$@" > "$DIR/out" 2> "$DIR/err"; local rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL: pmindex $* exited $rc, want $want: $(tail -c 600 "$DIR/err") $(tail -c 300 "$DIR/out")"
    fails=$((fails + 1))
  elif [ "$want" -gt 1 ] && [ "$(wc -l < "$DIR/err")" -ne 1 ]; then
    echo "FAIL: pmindex $* refused with $(wc -l < "$DIR/err") lines on stderr, want one: $(head -c 600 "$DIR/err")"
    fails=$((fails + 1))
  fi
}
indexes=$("$PM" list --json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["indexes"]:
    print(e["name"], int(e["persistent"]), int(e["concurrent"]), int(e["ordered"]))')
[ -n "$indexes" ] || { echo "FAIL: pmindex list --json lists no index"; exit 1; }
n=0
while read -r name persistent concurrent ordered; do
  n=$((n + 1))
  export PMINDEX_POOL_SIZE=$(pool_size "$name")
  pool="$DIR/$name.pool"
  if [ "$name" = null ]; then
    run 0 bench --index "$name" -n 2000 --seconds 0.05 --pool "$DIR/bench.pool"
    run 2 load --index "$name" --pool "$pool" --keys 2000
    run 2 stress --index "$name" --seconds 0.1
  elif [ "$persistent" = 1 ]; then
    run 0 load --index "$name" --pool "$pool" --keys 2000
    run 0 verify --pool "$pool" --keys 2000
    rm -f "$pool"
    run 0 bench --index "$name" -n 2000 --seconds 0.05 --pool "$DIR/bench.pool"
    run 0 crashtest --index "$name" --images 20 --ops 100 --quiet
    run 0 stress --index "$name" --seconds 0.1
    run 0 damagetest --index "$name" --cases 2
    # --check snapshot calls the index from threads of its own: refused on an
    # unordered index (no range queries), under the workers' lock on a
    # single-threaded one (whose every range query is then atomic).
    if [ "$ordered" = 0 ]; then
      run 2 stress --index "$name" --seconds 0.1 --check snapshot
    elif [ "$concurrent" = 0 ]; then
      run 0 stress --index "$name" --seconds 0.3 --check snapshot
    fi
  else
    run 2 load --index "$name" --pool "$pool" --keys 2000
    [ -e "$pool" ] && { echo "FAIL: load --index $name refused, but made $pool"; fails=$((fails + 1)); }
    run 0 load --index "$name" --mode dram --keys 2000
    run 2 verify --index "$name" --pool "$pool" --keys 2000
    run 0 bench --index "$name" -n 2000 --seconds 0.05 --pool "$DIR/bench.pool"
    run 12 crashtest --index "$name"
    run 0 stress --index "$name" --seconds 0.1
    run 2 damagetest --index "$name"
  fi
  rm -f "$DIR"/*.pool*
  echo "$name: every verb answered"
done <<< "$indexes"
echo "$n indexes, $runs runs, $fails failures"
[ $fails -eq 0 ]
