#!/bin/bash
# `pmindex study` on bad input: a one-line error and exit code 2 for an
# unknown study, scale or part, and for study files with an unknown key, an
# unknown index, an unknown cell label or no indexes; and for a bad
# --plugin. A PiBench wrapper given by --plugin runs beside the study's
# indexes.
# usage: study_errors.sh PMINDEX LIBPMINDEX_PIBENCH
set -u
PM=$1
LIB=$2
DIR=$(mktemp -d /dev/shm/pmindex-study-err.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect CODE PATTERN -- ARGS...: the exit code, and one stderr line matching.
expect() {
  local code=$1 pat=$2
  shift 3
  "$PM" "$@" > "$DIR/out" 2> "$DIR/err"
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "pmindex $*: exit $rc, wanted $code ($(cat "$DIR/err"))"
  [ "$(wc -l < "$DIR/err")" -eq 1 ] || fail "pmindex $*: stderr is not one line: $(cat "$DIR/err")"
  grep -q -- "$pat" "$DIR/err" || fail "pmindex $*: stderr '$(cat "$DIR/err")' lacks '$pat'"
  echo "ok: $(cat "$DIR/err")"
}

"$PM" study list > "$DIR/list" || fail "study list exited $?"
grep -q "^part-two " "$DIR/list" || fail "study list does not show part-two"
grep -q "invalid" "$DIR/list" && fail "study list found an invalid study: $(cat "$DIR/list")"

expect 2 "unknown study 'no-such'" -- study run no-such --scale smoke --out "$DIR/o"
expect 2 "unknown --scale 'huge'" -- study run part-two --scale huge --out "$DIR/o"
expect 2 "has no part 'nope'" -- study run part-two --scale smoke --only nope --out "$DIR/o"
expect 2 "usage: pmindex study" -- study frobnicate

good='name = "t"
title = "t"
paper = "p"
[[part]]
name = "a"
title = "a"
[[part.run]]
name = "r"
workloads = ["read=1"]'
printf '%s\nindexes = ["canary"]\nbogus = 1\n' "$good" > "$DIR/unknown-key.toml"
expect 2 "unknown key 'bogus' in part 'a' run 'r'" -- study run "$DIR/unknown-key.toml" --out "$DIR/o"
printf '%s\nindexes = ["canary", "no-such-index"]\n' "$good" > "$DIR/unknown-index.toml"
expect 2 "unknown index 'no-such-index'" -- study run "$DIR/unknown-index.toml" --out "$DIR/o"
printf '%s\n' "$good" > "$DIR/no-index.toml"
expect 2 "needs 'indexes'" -- study run "$DIR/no-index.toml" --out "$DIR/o"
printf '%s\nindexes = ["canary"]\n[[finding]]\nid = "f"\nstatement = "s"\nsource = "x"\nkind = "ratio"\nmetric = "run.mops"\na = { colour = "red" }\nb = { index = "canary" }\nwithin = [1, 2]\n' "$good" > "$DIR/bad-label.toml"
expect 2 "unknown cell label 'colour'" -- study run "$DIR/bad-label.toml" --out "$DIR/o"
printf 'name = "t\n' > "$DIR/syntax.toml"
expect 2 "syntax.toml:1" -- study run "$DIR/syntax.toml" --out "$DIR/o"
expect 2 "wants NAME=PATH" -- study run part-two --scale smoke --plugin "$LIB" --out "$DIR/o"
expect 2 "the name of a built-in index" -- study run part-two --scale smoke --plugin "fptree=$LIB" --out "$DIR/o"
expect 2 "a name is letters, digits" -- study run part-two --scale smoke --plugin "my orig=$LIB" --out "$DIR/o"
expect 2 "cannot read $DIR/none.so" -- study run part-two --scale smoke --plugin "orig=$DIR/none.so" --out "$DIR/o"
expect 2 "unknown --plugin-abi 'v2'" -- study run part-two --scale smoke --plugin "orig=$LIB" --plugin-abi v2 --out "$DIR/o"
[ -e "$DIR/o" ] && fail "a failed study run left an output directory"

# Wrappers given on the command line: their cells carry their names, beside
# the study's own, measured in the same bench command (one interleaving:
# one raw result file per run), and the recorded command names them.
printf '%s\nindexes = ["canary"]\nrecords = "2K"\n' "$good" > "$DIR/plug.toml"
"$PM" study run "$DIR/plug.toml" --scale smoke --plugin "mine=$LIB,other=$LIB" --out "$DIR/p" > "$DIR/out" 2>&1 ||
  fail "study run with --plugin exited $?: $(cat "$DIR/out")"
for name in mine other; do
  grep -q "\"index\": *\"$name\"" "$DIR/p/results.json" || fail "no cell of the plugin '$name' in results.json"
  grep -q "\"plugin\": *\"$name\"" "$DIR/p/results.json" || fail "the cells of '$name' carry no plugin label"
done
grep -q '"index": *"canary"' "$DIR/p/results.json" || fail "no cell of canary in results.json"
raw=$(ls "$DIR/p/raw/"*.json | grep -vc probe)
[ "$raw" -eq 1 ] || fail "the wrappers and the index ran in $raw bench commands, not one: $(ls "$DIR/p/raw")"
grep -q -- "--plugin mine=$LIB,other=$LIB" "$DIR/p/README.md" || fail "README.md does not give the command with --plugin"
# A run that fails: the page says why (its raw/ stderr is not kept beside it).
printf '%s\nindexes = ["canary"]\nrecords = "200K"\npool_size = "1M"\n' "$good" > "$DIR/full.toml"
"$PM" study run "$DIR/full.toml" --scale smoke --out "$DIR/f" > "$DIR/out" 2>&1
grep -q "a.r: failed (exit code 8): .*pool POOL is full" "$DIR/f/README.md" ||
  fail "the page does not say why the run failed: $(grep -i failed "$DIR/f/README.md")"
# At paper scale, an index whose estimated footprint exceeds the run's
# pool size is skipped with a note, not run into a full pool.
printf '%s\nindexes = ["canary", "fptree"]\nrecords = "1M"\npool_size = "24M"\n' "$good" > "$DIR/small-pool.toml"
"$PM" study run "$DIR/small-pool.toml" --scale paper --out "$DIR/sp" > "$DIR/out" 2>&1 ||
  fail "a study whose indexes are skipped exited $?: $(cat "$DIR/out")"
grep -q "skipped fptree in a.r: its pool would need ~[0-9]* MiB, more than the run's pool size (24 MiB)" "$DIR/sp/README.md" ||
  fail "the page does not say why fptree was skipped: $(grep -i skip "$DIR/sp/README.md")"
# A --resume after a rebuild: the page names each run's commit, not the
# first run's for all.
printf '%s\nindexes = ["canary"]\nrecords = "2K"\n[[part.run]]\nname = "s"\nindexes = ["canary"]\nworkloads = ["insert=1"]\nrecords = "2K"\n' "$good" > "$DIR/two.toml"
"$PM" study run "$DIR/two.toml" --scale smoke --out "$DIR/t" > "$DIR/out" 2>&1 || fail "two-run study exited $?: $(cat "$DIR/out")"
grep -q "commit " "$DIR/t/README.md" || fail "the page names no commit"
python3 - "$DIR/t/raw/a.s.json" <<'PY' || fail "cannot edit the raw result"
import json, sys
d = json.load(open(sys.argv[1]))
d["context"]["git_commit"] = "0000000-earlier"
json.dump(d, open(sys.argv[1], "w"))
PY
"$PM" study run "$DIR/two.toml" --scale smoke --out "$DIR/t" --resume > "$DIR/out" 2>&1 || fail "--resume exited $?: $(cat "$DIR/out")"
grep -q "runs of 2 commits" "$DIR/t/README.md" || fail "a page of two builds names one: $(grep build: "$DIR/t/README.md")"
grep -q "0000000-earlier: a.s" "$DIR/t/README.md" || fail "the page does not say which run came from which commit"
echo "PASS"
