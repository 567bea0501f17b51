#!/bin/bash
# Every numeric option of every verb refuses NaN, stray suffixes and values
# outside its range with exit code 2, and the first option of each kind in
# each verb also overflow, infinity, signs and every other malformed number
# (the same parser reads every option of a kind). The table is
# the binary's own: `pmindex VERB --describe-options` lists each numeric
# option the verb reads with its kind and range (tools/cli.hpp), so an option
# added later is tested without editing this file. Then the cases the issue
# named (bench --key-space 0, --theta -5, --seconds inf, load --keys 99999999999T).
# usage: options_table.sh PMINDEX
set -u
PM=$1
DIR=$(mktemp -d /dev/shm/pmindex-options.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
export PMINDEX_POOL="$DIR/never.pool"
fails=0 cases=0
expect2() {  # expect2 WHAT CMD...: the command must exit 2 (and quickly)
  local what=$1; shift
  cases=$((cases + 1))
  timeout 30 "$@" > "$DIR/out" 2>&1; local rc=$?
  if [ $rc -ne 2 ]; then
    echo "FAIL: $what: exit $rc (want 2): $(head -c 300 "$DIR/out")"
    fails=$((fails + 1))
  fi
}
verbs=$("$PM" help | awk '/^verbs:/ {v=1; next} v && /^  [a-z]/ {print $1} /^$/ && v>1 {exit} v {v++}')
[ -n "$verbs" ] || { echo "FAIL: no verbs in pmindex help"; exit 1; }
nopts=0
declare -A full_done
for verb in $verbs; do
  "$PM" $verb --describe-options > "$DIR/opts" 2> "$DIR/err" || { echo "FAIL: $verb --describe-options exited $?: $(cat "$DIR/err")"; fails=$((fails + 1)); continue; }
  # Each option's range's two outsides, appended to its line (one python3
  # for the verb, not one per option).
  python3 - "$DIR/opts" > "$DIR/opts+" <<'PY'
import sys
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 4:
        continue
    name, kind, lo, hi = f[:4]
    if kind == "real":
        lo, hi = float(lo), float(hi)
        out = [repr(lo - abs(lo) * 0.5 - 1), repr(hi + abs(hi) + 1)]
    else:
        lo, hi = int(float(lo)), int(float(hi))
        out = ([lo - 1] if lo > 0 else []) + ([hi + 1] if hi < 2**64 - 1 else [])
    print(name, kind, *out)
PY
  while read -r name kind outside; do
    [ -n "$name" ] || continue
    nopts=$((nopts + 1))
    # Every option: NaN, a stray suffix and its range's two outsides. The
    # whole list of malformed numbers (they all go through the parser of
    # their kind, tools/cli.hpp) once per verb and kind: ~4x fewer cases
    # than every value on every option, the same parser paths.
    if [ -z "${full_done[$verb/$kind]:-}" ]; then
      full_done[$verb/$kind]=1
      bad=(nan inf -inf "" abc 12abc 1e999 0x10)
      [ "$kind" = real ] || bad+=(-1 18446744073709551616 99999999999T 1.5 "5 K")
      [ "$kind" = count ] && bad+=(2^64)
    else
      bad=(nan 12abc)
    fi
    bad+=($outside)
    for v in "${bad[@]}"; do
      expect2 "$verb --$name '$v'" "$PM" $verb "--$name=$v"
    done
    env_name=PMINDEX_$(echo "$name" | tr 'a-z-' 'A-Z_')
    expect2 "$verb $env_name=nan" env "$env_name=nan" "$PM" $verb
  done < "$DIR/opts+"
done
[ $nopts -ge 40 ] || { echo "FAIL: only $nopts numeric options described"; fails=$((fails + 1)); }
# The cases of the issue, by name.
expect2 "bench --key-space 0" "$PM" bench --index canary --key-space 0 -n 1000 --seconds 0.1
expect2 "bench --theta -5" "$PM" bench --index canary --theta -5 -n 1000 --seconds 0.1
expect2 "bench --skew -5" "$PM" bench --index canary --skew -5 -n 1000 --seconds 0.1
expect2 "bench --selectivity -5" "$PM" bench --index canary --selectivity -5 -n 1000 --seconds 0.1
expect2 "bench --read -0.5" "$PM" bench --index canary --read -0.5 -n 1000 --seconds 0.1
expect2 "bench --seconds inf" "$PM" bench --index canary --seconds inf -n 1000
expect2 "bench --seconds 0" "$PM" bench --index canary --seconds 0 -n 1000
expect2 "bench -n 0" "$PM" bench --index canary -n 0 --seconds 0.1
expect2 "load --keys 99999999999T" "$PM" load --index canary --keys 99999999999T
expect2 "load --keys 2T" "$PM" load --index canary --keys 2T
expect2 "stress --seconds inf" "$PM" stress --index canary --seconds inf
# The parser's own messages (tools/cli.cpp): each names the option and what
# is wrong with it.
expect2msg() {  # expect2msg REGEX CMD...: exit 2 with a message matching REGEX
  local re=$1; shift
  cases=$((cases + 1))
  timeout 30 "$@" > "$DIR/out" 2>&1; local rc=$?
  if [ $rc -ne 2 ] || ! grep -qE -e "$re" "$DIR/out"; then
    echo "FAIL: $*: exit $rc (want 2 and /$re/): $(head -c 300 "$DIR/out")"
    fails=$((fails + 1))
  fi
}
expect2msg "option --keys needs a value" "$PM" load --index canary --keys
expect2msg "option --keys needs a value" "$PM" load --index canary --keys --seed 3
expect2msg "option --keys is given more than once" "$PM" load --index canary --keys 1 --keys 2
expect2msg "option --json takes no value" "$PM" list --json=1
expect2msg "unknown option --no-such for .pmindex load." "$PM" load --index canary --no-such 1
expect2msg "unexpected argument stray for .pmindex load." "$PM" load --index canary stray
expect2msg "--keys expects a whole number, not '-5'" "$PM" load --index canary --keys -5
expect2msg "--keys expects a whole number, not 'abc'" env PMINDEX_KEYS=abc "$PM" load --index canary
echo "$cases cases over $nopts numeric options, $fails failures"
[ $fails -eq 0 ]
