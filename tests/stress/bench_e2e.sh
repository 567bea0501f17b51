#!/bin/bash
# End-to-end test of `pmindex bench` and `pmindex compare` (tests/stress/bench.cmake):
# tiny runs with --json/--csv, the comparison of two result files, the
# PiBench plugin round trip, --recover, the parallel modes, and the refusal to
# touch a file that is not the harness's pool.
# usage: bench_e2e.sh PMINDEX LIBPMINDEX_PIBENCH.so
set -u
PM=$1
PLUGIN=$2
DIR=$(mktemp -d /dev/shm/pmindex-bench-test.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
small=(-n 20000 -p 40000 -t 2 --pool "$DIR/p.pool" --no-progress)

"$PM" bench --index canary,stdmap,null --workload ycsb-a,update90insert10 "${small[@]}" \
  --json "$DIR/a.json" --csv "$DIR/a.csv" > "$DIR/a.txt" || fail "bench A exited $?"
cat "$DIR/a.txt"
grep -q "^canary " "$DIR/a.txt" || fail "no canary row in the table"
[ "$(grep -c ' ok$' "$DIR/a.txt")" -eq 6 ] || fail "expected 6 checked rows"
grep -q '"git_commit"' "$DIR/a.json" || fail "no context block in the JSON"
[ "$(wc -l < "$DIR/a.csv")" -eq 7 ] || fail "CSV: expected a header and 6 rows"
[ -e "$DIR/p.pool" ] && fail "the pool was left behind"

"$PM" bench --index canary,stdmap,null --workload ycsb-a,update90insert10 "${small[@]}" --seed 2 \
  --json "$DIR/b.json" > /dev/null || fail "bench B exited $?"
"$PM" compare "$DIR/a.json" "$DIR/b.json" > "$DIR/cmp.txt" || fail "compare exited $?"
grep -q "run.mops " "$DIR/cmp.txt" || fail "compare printed no throughput ratio"
grep -q "only in" "$DIR/cmp.txt" && fail "compare did not pair the runs"
echo "compare: $(grep -c 'run.mops ' "$DIR/cmp.txt") runs paired"

# The PiBench round trip: pmindex's own wrapper, loaded as a plugin.
PMINDEX_INDEX=canary "$PM" bench --plugin "$PLUGIN" --workload ycsb-e,ycsb-d "${small[@]}" > "$DIR/plug.txt" \
  || fail "plugin bench exited $?"
cat "$DIR/plug.txt"
[ "$(grep -c ' ok$' "$DIR/plug.txt")" -eq 2 ] || fail "plugin rows not checked ok"

# A plugin beside built-in indexes: its cells join theirs in one
# interleaving. The wrapper keeps its pool file (PMINDEX_KEEP_POOL): the
# harness removes what the wrapper made, so the next repetition starts fresh.
PMINDEX_INDEX=canary PMINDEX_KEEP_POOL=1 "$PM" bench --index canary,stdmap --plugin "$PLUGIN" --workload ycsb-c \
  --repetitions 2 --json "$DIR/mix.json" "${small[@]}" > "$DIR/mix.txt" || fail "plugin beside indexes exited $?"
cat "$DIR/mix.txt"
for row in canary stdmap plugin:pmindex_pibench; do
  grep -q "^$row .* ok$" "$DIR/mix.txt" || fail "no checked $row row beside the others"
done
[ -e "$DIR/p.pool" ] && fail "the plugin's pool was left behind"
[ "$(grep -c '"repetition"' "$DIR/mix.json")" -ge 6 ] || fail "expected 3 cells x 2 repetitions in the JSON"
# Several wrappers, named NAME=PATH, each a cell of its own in the same
# interleaving (an original and its port, say, both as PiBench wrappers).
PMINDEX_INDEX=canary "$PM" bench --index stdmap --plugin "orig=$PLUGIN,port=$PLUGIN" --workload ycsb-c \
  "${small[@]}" > "$DIR/two.txt" || fail "two plugins exited $?"
for row in stdmap orig port; do
  grep -q "^$row .* ok$" "$DIR/two.txt" || fail "no checked $row row among two wrappers: $(cat "$DIR/two.txt")"
done

# Recovery figures, instance and global-lock modes, every universe.
"$PM" bench --index canary --workload ycsb-b --recover --detail "${small[@]}" > "$DIR/rec.txt" || fail "--recover exited $?"
grep -q "recovery: clean reopen" "$DIR/rec.txt" || fail "no recovery line"
for par in instance global-lock; do
  "$PM" bench --index canary --parallel $par --workload ycsb-f "${small[@]}" > /dev/null || fail "--parallel $par"
done
for u in dense sparse clustered hashed; do
  "$PM" bench --index stdmap --universe $u --workload read100 --remove 0.2 --insert 0.2 "${small[@]}" > /dev/null \
    || fail "--universe $u"
done
# Phases on one index, written as mixes, each scan phase with its own length.
"$PM" bench --index stdmap --same-index --workload read=1,scan=1:7,scan=1:50 --json "$DIR/ph.json" "${small[@]}" \
  > "$DIR/ph.txt" || fail "--same-index with mixes exited $?"
[ "$(grep -c ' ok$' "$DIR/ph.txt")" -eq 3 ] || fail "expected 3 checked phases"
python3 - "$DIR/ph.json" <<'PY' || fail "scan lengths of the phases"
import json, sys
r = json.load(open(sys.argv[1]))['results']
sizes = [x['workload_spec'].get('scan_size') for x in r]
assert sizes[1:] == [7, 50], sizes
PY
# --reuse-prefill: one load for every cell of a prefill, each cell on a
# reopened copy of it; the copies go when the command ends.
"$PM" bench --index canary --reuse-prefill --repetitions 2 --workload read=0.5+insert=0.3+remove=0.2,insert=0.5+update=0.5 \
  --json "$DIR/re.json" "${small[@]}" > "$DIR/re.txt" || fail "--reuse-prefill exited $?"
python3 - "$DIR/re.json" <<'PY' || fail "--reuse-prefill runs"
import json, sys
d = json.load(open(sys.argv[1]))
r = d['results']
assert len(r) == 4, len(r)
assert d['context']['options']['reuse_prefill'] is True
assert len({x['load']['mops'] for x in r}) == 1, [x['load'] for x in r]
for x in r:
    assert any(n.startswith('--reuse-prefill: ran on') for n in x['notes']), x['notes']
    assert x['check']['expected_records'] == x['check']['scanned_records'], x['check']
PY
ls "$DIR" | grep -q prefill && fail "a kept load outlived the command: $(ls "$DIR")"
"$PM" bench --index null --workload scan=1:0 "${small[@]}" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a bad mix: expected exit code 2"
# Zipfian over a 2^63 key space sets up at once (draws mostly miss).
"$PM" bench --index null --workload ycsb-c --key-space 2^63 "${small[@]}" > /dev/null || fail "2^63 key space"

# Datasets: `pmindex keys` on every generator; the byte path on a byte index
# an index that cannot take the values is skipped; a .gz key file; scans.
for d in names wiki urls u64-bytes; do
  "$PM" keys --dataset $d -n 20000 > "$DIR/keys.txt" || fail "keys --dataset $d exited $?"
  grep -q "all distinct" "$DIR/keys.txt" || fail "keys --dataset $d: not all distinct"
done
"$PM" keys --dataset urls -n 1000 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["keys"]==1000 and d["duplicates"]==0, d' \
  || fail "keys --json"
"$PM" bench --index stdmap,canary --dataset names --value-size 100 --workload ycsb-a,scan=1:100 "${small[@]}" \
  --json "$DIR/names.json" > "$DIR/names.txt" || fail "bench --dataset names exited $?"
cat "$DIR/names.txt"
[ "$(grep -c ' ok$' "$DIR/names.txt")" -eq 4 ] || fail "names: expected 4 checked rows"
# An index that cannot take the run is skipped, not failed: canary takes
# values up to 128 MiB, the harness's null index up to 1 GiB (one record,
# one operation: each value is built in full).
"$PM" bench --index null,canary --dataset names --value-size 134217729 -n 1 -p 1 --workload ycsb-c \
  --no-progress > "$DIR/skip.txt" || fail "bench with a skipped index exited $?"
grep -q "^null " "$DIR/skip.txt" || fail "skip: null did not run"
grep -q "^skipped: canary (takes values up to 134217728 bytes" "$DIR/skip.txt" || fail "canary not reported as skipped"
python3 - "$DIR/names.json" <<'PY' || fail "dataset and value size in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['context']['options']['dataset'] == 'names' and d['context']['options']['value_size'] == 100
for r in d['results']:
    assert r['dataset'] == 'names' and r['value_size'] == 100 and r['byte_path'], r
    assert r['check']['bad_values'] == 0
PY
printf 'delta\nalpha\n\nbravo\r\nalpha\ncharlie\n' | gzip > "$DIR/k.txt.gz"
for i in $(seq 1 3000); do echo "key$i"; done | gzip >> "$DIR/k.txt.gz"
"$PM" bench --index stdmap --dataset "file:$DIR/k.txt.gz" -n 2000 -p 4000 -t 2 --pool "$DIR/p.pool" --no-progress \
  --workload ycsb-b > "$DIR/file.txt" 2> "$DIR/file.err" || fail "bench --dataset file:.gz exited $?"
grep -q "3004 keys (1 duplicates and 1 empty lines dropped)" "$DIR/file.err" || fail "no load line: $(cat "$DIR/file.err")"
grep -q ' ok$' "$DIR/file.txt" || fail "file dataset row not checked"
PMINDEX_INDEX=stdmap "$PM" bench --plugin "$PLUGIN" --dataset u64-bytes --value-size 64 --workload ycsb-e "${small[@]}" \
  > "$DIR/plugb.txt" || fail "plugin with byte keys exited $?"
grep -q ' ok$' "$DIR/plugb.txt" || fail "plugin byte rows not checked ok"
# Dataset errors: documented exit codes, one line each.
"$PM" keys --dataset nosuch > /dev/null 2> "$DIR/e.txt"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < "$DIR/e.txt")" -eq 1 ] || fail "unknown dataset: exit $rc, $(cat "$DIR/e.txt")"
"$PM" keys --dataset "file:$DIR/none.txt" > /dev/null 2>&1; rc=$?
[ $rc -eq 3 ] || fail "missing key file: expected exit code 3, got $rc"
printf 'a\0b\n' > "$DIR/bin.txt"
"$PM" keys --dataset "file:$DIR/bin.txt" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "binary key file: expected exit code 2, got $rc"
: > "$DIR/empty.txt"
"$PM" keys --dataset "file:$DIR/empty.txt" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "empty key file: expected exit code 2, got $rc"

# Never touch a file that is not the harness's pool.
echo "precious" > "$DIR/x.pool"
"$PM" bench --index canary -n 1000 -p 1000 --no-progress --pool "$DIR/x.pool" > /dev/null 2>&1
rc=$?
[ $rc -eq 10 ] || fail "expected exit code 10 (io) on a foreign file, got $rc"
[ "$(cat "$DIR/x.pool")" = "precious" ] || fail "a foreign file was modified"
"$PM" bench --index nosuch "${small[@]}" > /dev/null 2>&1
[ $? -eq 2 ] || fail "unknown index: expected exit code 2"
# The pmemids grid: two structures, every mode, 1 and 2 threads, both
# workloads; the study's table with a row per structure and thread count.
"$PM" bench --preset pmemids --index btree,hashtable -n 2000 -p 2000 -t 2 --pool "$DIR/g.pool" --no-progress \
  --json "$DIR/g.json" > "$DIR/g.txt" || fail "--preset pmemids exited $?"
[ "$(grep -c ' ok$' "$DIR/g.txt")" -eq 32 ] || fail "--preset pmemids: expected 32 checked runs (2 x 4 modes x 2 x 2)"
grep -q "^pmemids grid" "$DIR/g.txt" || fail "--preset pmemids: no grid table"
[ "$(grep -cE '^(btree|hashtable) +[12] ' "$DIR/g.txt")" -eq 4 ] || fail "--preset pmemids: expected 4 grid rows"
grep -q '"preset": *"pmemids"' "$DIR/g.json" || fail "--preset pmemids: not in the JSON options"
grep -q '^pmemids grid (2000 records, 100-byte values)' "$DIR/g.txt" || fail "--preset pmemids: not the study's 100-byte values"
# arraylist (a key limit) in both workloads at 1 and 2 threads: its note once.
"$PM" bench --preset pmemids --index arraylist --params capacity=4096 --mode persist -n 2000 -p 2000 -t 2 \
  --pool "$DIR/a.pool" --no-progress > "$DIR/a.txt" || fail "--preset pmemids --index arraylist exited $?"
[ "$(grep -c '^note: arraylist pmemids-read,pmemids-write: ' "$DIR/a.txt")" -eq 1 ] ||
  fail "--preset pmemids: arraylist's note not printed exactly once"
"$PM" bench --preset nosuch "${small[@]}" > /dev/null 2>&1
[ $? -eq 2 ] || fail "unknown --preset: expected exit code 2"
echo "bench e2e: all passed"
