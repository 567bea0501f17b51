#!/bin/sh
# `pmindex stress` and `pmindex damagetest` name their /dev/shm pools after
# their pid and pid namespace; a run killed before its cleanup leaves the
# pool behind. The next run removes those whose process is gone, and nothing
# else: not another namespace's (its pids are not ours), not a pool some
# process holds open (tools/cli.hpp remove_stale_pools).
set -eu
P=$1
dead=$(sh -c 'echo $$')          # a pid that has exited
while kill -0 "$dead" 2>/dev/null; do sleep 0.1; done
live=$$
d=/dev/shm
ns=$(stat -L -c %i /proc/self/ns/pid)
other=$((ns + 1))                # a namespace that is not ours
held=$(sh -c 'echo $$')          # another dead pid, its pool held open below
while kill -0 "$held" 2>/dev/null; do sleep 0.1; done
files="pmindex-stress-$dead.pool pmindex-stress-$live.pool pmindex-stress-x$dead.pool
       pmindex-stressy-$dead.pool pmindex-damage.$dead.canary.u.clean
       pmindex-stress-$dead-ns$ns.pool pmindex-stress-$dead-ns$other.pool pmindex-stress-$held.pool"
for f in $files; do : > "$d/$f"; done
holder=
cleanup() {
  [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
  for f in $files; do rm -f "$d/$f"; done
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# An open pool holds an exclusive flock (pm::pool): a stand-in holds one.
(exec 9>"$d/pmindex-stress-$held.pool"; flock -x 9; exec sleep 60) &
holder=$!
while flock -n -x "$d/pmindex-stress-$held.pool" true 2>/dev/null; do sleep 0.05; done  # until it holds it

# Another stress or damagetest run of the suite, running beside this one,
# may remove the same stale file first (with the note in its own output):
# the dead files are made again and the run repeated, a few times.
for attempt in 1 2 3 4 5; do
  : > "$d/pmindex-stress-$dead.pool"
  : > "$d/pmindex-stress-$dead-ns$ns.pool"
  out=$("$P" stress --index fptree --threads 1 --seconds 0.05 --keys 100 --pool-size 16M 2>&1) || fail "stress failed: $out"
  [ ! -e "$d/pmindex-stress-$dead.pool" ] || fail "a dead run's stress pool was left"
  echo "$out" | grep -q "removed $d/pmindex-stress-$dead.pool" && break
  [ "$attempt" -lt 5 ] || fail "no note of the removal: $out"
done
[ -e "$d/pmindex-stress-$live.pool" ] || fail "a live process's pool was removed"
[ -e "$d/pmindex-stress-x$dead.pool" ] || fail "a name without a pid after the prefix was removed"
[ -e "$d/pmindex-stressy-$dead.pool" ] || fail "another prefix was removed"
[ -e "$d/pmindex-damage.$dead.canary.u.clean" ] || fail "stress removed damagetest's file"
[ ! -e "$d/pmindex-stress-$dead-ns$ns.pool" ] || fail "a dead run's pool named with our namespace was left"
[ -e "$d/pmindex-stress-$dead-ns$other.pool" ] || fail "another pid namespace's pool was removed"
[ -e "$d/pmindex-stress-$held.pool" ] || fail "a pool held open (flock) was removed"

for attempt in 1 2 3 4 5; do
  : > "$d/pmindex-damage.$dead.canary.u.clean"
  out=$("$P" damagetest --index canary --cases 1 2>&1) || fail "damagetest failed: $out"
  [ ! -e "$d/pmindex-damage.$dead.canary.u.clean" ] || fail "a dead run's damagetest file was left"
  echo "$out" | grep -q "damagetest: removed $d/pmindex-damage.$dead.canary.u.clean" && break
  [ "$attempt" -lt 5 ] || fail "no note of the removal: $out"
done
[ -e "$d/pmindex-stress-$live.pool" ] || fail "damagetest removed a live process's stress pool"
echo ok
