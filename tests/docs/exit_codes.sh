#!/usr/bin/env bash
# The README's exit-code table is a contract: for every code in it, a command
# line that ends with that code, whose message and table row say the same
# thing; and the table, the codes of include/pmindex/error.hpp and the cases
# below name the same codes.
# usage: exit_codes.sh PMINDEX README.md ERROR_HPP
set -u
PM=$1 README=$2 ERRH=$3
DIR=$(mktemp -d /dev/shm/pmindex-exit-codes.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
export PMINDEX_POOL="$DIR/default.pool"  # no case may touch the shared default pool
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# code -> meaning, from the table under "### Exit codes".
declare -A row
while IFS='|' read -r _ code meaning _; do
  code=$(echo "$code" | tr -d ' ')
  [[ $code =~ ^[0-9]+$ ]] && row[$code]=$meaning
done < <(awk '/^### Exit codes/{on=1; next} /^#/{on=0} on && /^\| *[0-9]+ *\|/' "$README")
[ ${#row[@]} -gt 0 ] || { echo "FAIL: no exit-code table in $README"; exit 1; }

# The codes of errc (name = N,) and the table's: the same set.
enums=$(sed -n '/^enum class errc/,/^};/p' "$ERRH" | grep -oE '= *[0-9]+' | tr -d '= ' | sort -n | tr '\n' ' ')
table=$(printf '%s\n' "${!row[@]}" | sort -n | tr '\n' ' ')
[ "$enums" = "$table" ] || fail "error.hpp's errc codes ($enums) and the README table's ($table) differ"

declare -A tested
# expect CODE ROW_REGEX MSG_REGEX CMD...: the command exits CODE, its output
# matches MSG_REGEX, and the table's row for CODE matches ROW_REGEX.
expect() {
  local code=$1 row_re=$2 msg_re=$3; shift 3
  tested[$code]=1
  timeout 120 "$@" > "$DIR/out" 2>&1; local rc=$?
  if [ $rc -ne "$code" ]; then
    fail "exit $rc, want $code: $*: $(head -c 400 "$DIR/out")"
  elif ! grep -qiE "$msg_re" "$DIR/out"; then
    fail "exit $code but no /$msg_re/ in the message: $*: $(head -c 400 "$DIR/out")"
  fi
  echo "${row[$code]:-}" | grep -qiE "$row_re" || fail "the README's row for $code ('${row[$code]:-}') does not say /$row_re/"
}
# not_provoked CODE REASON: a code no command line can be made to return here.
not_provoked() { tested[$1]=1; echo "exit code $1 not provoked: $2"; }

# A small pool of 100 keys: the base of the damaged copies below.
"$PM" load --index canary --pool "$DIR/base.pool" --pool-size 2M --keys 100 > /dev/null 2>&1 ||
  { echo "FAIL: cannot make the base pool"; exit 1; }
copy() { cp "$DIR/base.pool" "$DIR/$1"; }
# poke FILE OFFSET BYTES...: overwrite bytes of a pool file.
poke() {
  local f=$1 off=$2; shift 2
  printf "$(printf '\\x%02x' "$@")" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

expect 0 'success' '' "$PM" list
expect 1 'violation' 'missing' "$PM" verify --pool "$DIR/base.pool" --keys 200
expect 2 'usage' 'unknown verb' "$PM" no-such-verb
expect 2 'usage' 'unknown option' "$PM" load --index canary --no-such-option 1
expect 3 'not found' 'not found' "$PM" info --pool "$DIR/absent.pool"
head -c 2097152 /dev/zero | tr '\0' 'x' > "$DIR/text.pool"
expect 4 'not a pmindex pool' 'not a pmindex pool' "$PM" info --pool "$DIR/text.pool"
copy version.pool && poke "$DIR/version.pool" 8 2 0 0 0  # format_version (header offset 8) = 2
expect 5 'format version' 'format version' "$PM" info --pool "$DIR/version.pool"
expect 6 'another index' "holds index 'canary'" "$PM" verify --index btree --pool "$DIR/base.pool" --keys 1
copy short.pool && truncate -s 1M "$DIR/short.pool"
expect 7 'too small or truncated' 'truncated' "$PM" info --pool "$DIR/short.pool"
expect 8 'pool full' 'full' "$PM" load --index canary --pool "$DIR/full.pool" --pool-size 1M --keys 100000
expect 8 'pool full' 'full' "$PM" bench --index canary --pool "$DIR/bench-full.pool" --pool-size 1M -n 100000 \
  --workload insert=1 --ops 100000
expect 9 'key limit' 'past the array' "$PM" load --index arraylist --params capacity=10 --pool "$DIR/array.pool" \
  --pool-size 2M --keys 20
copy taken.pool
expect 10 'exists already' 'already exists' "$PM" stress --index canary --pool "$DIR/taken.pool" --seconds 0.1
cmp -s "$DIR/base.pool" "$DIR/taken.pool" || fail "stress refused an existing pool but did not leave it as it was"
# A new pool's error names the path given, not the temporary name it is built under.
expect 10 'I/O error' "^pmindex: cannot create $DIR/nodir/new\\.pool: No such file" \
  "$PM" load --index canary --pool "$DIR/nodir/new.pool" --keys 1
copy params.pool && poke "$DIR/params.pool" 200 0x7e  # a byte of index_params: the header checksum fails
expect 11 'corrupt' 'damaged pool header' "$PM" info --pool "$DIR/params.pool"
expect 12 'unsupported mode' 'no persist mode' "$PM" crashtest --index stdmap
# An index without a tx mode asked for one: unsupported (12), whatever the pool's mode.
"$PM" load --index permart --pool "$DIR/permart.pool" --pool-size 8M --keys 10 > /dev/null 2>&1
expect 12 'unsupported mode' 'does not support mode tx' "$PM" verify --pool "$DIR/permart.pool" --keys 10 --mode tx
expect 13 'value too long' 'values of at most' "$PM" load --index btree --pool "$DIR/value.pool" --pool-size 8M \
  --keys 10 --value-size 300
# An index with a tx mode: a pool made in another mode asked for tx (14).
"$PM" load --index btree --pool "$DIR/btree.pool" --pool-size 8M --keys 10 > /dev/null 2>&1
expect 14 'wrong mode' 'cannot be opened in tx mode' "$PM" verify --pool "$DIR/btree.pool" --keys 10 --mode tx
if bash -c 'ulimit -v 4000000 && "$0" list; exit $?' "$PM" > /dev/null 2>&1; then
  # A volatile index loaded into DRAM past the address-space limit (a 1M
  # pool, so that the limit is met after ~150 MB of records, not ~500 MB
  # past the default 1G pool's mapping: seconds, not tens of them).
  expect 15 'out of memory' 'out of memory' bash -c "ulimit -v 250000 && exec \"$PM\" load --index stdmap --mode dram --pool-size 1M --keys 1T"
else
  not_provoked 15 "this pmindex cannot run under ulimit -v (a sanitizer build reserves terabytes of shadow \
memory at start); tests/alloc fails DRAM allocations in process instead"
fi

for code in "${!row[@]}"; do
  [ -n "${tested[$code]:-}" ] || fail "no case provokes exit code $code ('${row[$code]}')"
done
for code in "${!tested[@]}"; do
  [ -n "${row[$code]:-}" ] || fail "exit code $code is provoked but not in the README's table"
done
echo "${#row[@]} exit codes in the README table, $fails failures"
[ $fails -eq 0 ]
