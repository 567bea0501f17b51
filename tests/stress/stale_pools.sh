#!/bin/sh
# `pmindex stress` and `pmindex damagetest` name their /dev/shm pools after
# their pid; a run killed before its cleanup leaves the pool behind. The
# next run removes those whose process is gone, and nothing else
# (tools/cli.hpp remove_stale_pools).
set -eu
P=$1
dead=$(sh -c 'echo $$')          # a pid that has exited
while kill -0 "$dead" 2>/dev/null; do sleep 0.1; done
live=$$
d=/dev/shm
for f in "pmindex-stress-$dead.pool" "pmindex-stress-$live.pool" "pmindex-stress-x$dead.pool" \
         "pmindex-stressy-$dead.pool" "pmindex-damage.$dead.canary.u.clean"; do
  : > "$d/$f"
done
cleanup() { rm -f "$d/pmindex-stress-$dead.pool" "$d/pmindex-stress-$live.pool" "$d/pmindex-stress-x$dead.pool" \
                  "$d/pmindex-stressy-$dead.pool" "$d/pmindex-damage.$dead.canary.u.clean"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$P" stress --index fptree --threads 1 --seconds 0.05 --keys 100 --pool-size 16M 2>&1) || fail "stress failed: $out"
[ ! -e "$d/pmindex-stress-$dead.pool" ] || fail "a dead run's stress pool was left"
echo "$out" | grep -q "removed $d/pmindex-stress-$dead.pool" || fail "no note of the removal: $out"
[ -e "$d/pmindex-stress-$live.pool" ] || fail "a live process's pool was removed"
[ -e "$d/pmindex-stress-x$dead.pool" ] || fail "a name without a pid after the prefix was removed"
[ -e "$d/pmindex-stressy-$dead.pool" ] || fail "another prefix was removed"
[ -e "$d/pmindex-damage.$dead.canary.u.clean" ] || fail "stress removed damagetest's file"

out=$("$P" damagetest --index canary --cases 1 2>&1) || fail "damagetest failed: $out"
[ ! -e "$d/pmindex-damage.$dead.canary.u.clean" ] || fail "a dead run's damagetest file was left"
echo "$out" | grep -q "damagetest: removed $d/pmindex-damage.$dead.canary.u.clean" || fail "no note of the removal: $out"
[ -e "$d/pmindex-stress-$live.pool" ] || fail "damagetest removed a live process's stress pool"
echo ok
