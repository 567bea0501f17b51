#!/usr/bin/env bash
# SIGKILL test: `pmindex load --ack-every K` is killed at a random moment;
# `pmindex verify --keys <last acked count>` must then succeed (recovery keeps
# every acknowledged insert, check() holds), and re-running the load to
# completion on the recovered pool must give all N keys.
#
# usage: kill_verify.sh PMINDEX_BINARY INDEX ROUNDS [KEYS] [MAX_DELAY_MS] [OPTION...]
# OPTIONs go to both load and verify: `--dataset urls --value-size 100` is the
# byte-key mode (the index is created keys=bytes; pools of 256M then).
# Seed: PMINDEX_SEED (default: random, printed) picks the delays and ack steps.
set -u
bin=$1 index=$2 rounds=$3 keys=${4:-200000} max_ms=${5:-400}
shift $(( $# < 5 ? $# : 5 ))
extra=("$@")
pool_size=64M
[[ ${#extra[@]} -gt 0 ]] && pool_size=256M
seed=${PMINDEX_SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$seed
echo "kill_verify: index=$index rounds=$rounds keys=$keys max_delay=${max_ms}ms ${extra[*]:-} seed=$seed (rerun with PMINDEX_SEED=$seed)"
dir=/dev/shm
pool="$dir/c-kill-$index-$$.pool"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$pool" "$pool".creating.* "$out" "$err"' EXIT
fail() {
  echo "kill_verify: FAIL round $r: $*"
  echo "kill_verify: the killed load (status $status) printed: $(tail -c 2000 "$err")"
  exit 1
}

for ((r = 1; r <= rounds; r++)); do
  rm -f "$pool"
  ack=$(( 1 + RANDOM % 200 ))
  delay_ms=$(( RANDOM % max_ms ))
  "$bin" load --index "$index" --pool "$pool" --pool-size "$pool_size" --keys "$keys" --ack-every "$ack" \
    "${extra[@]}" >"$out" 2>"$err" &
  pid=$!
  sleep "$(printf '0.%03d' "$delay_ms")"
  kill -KILL "$pid" 2>/dev/null
  { wait "$pid"; } 2>/dev/null
  status=$?
  acked=$(grep '^acked ' "$out" | tail -n 1 | cut -d' ' -f2)
  acked=${acked:-0}
  if [[ $status -eq 0 ]]; then what="finished before the kill"; else what="killed (status $status)"; fi
  if [[ ! -e $pool ]]; then
    # Creation is atomic (built under a temporary name): no pool, no acks.
    [[ $acked -eq 0 ]] || fail "no pool after $acked acknowledged inserts"
    echo "round $r: delay ${delay_ms}ms, $what before the pool existed"
  else
    vout=$("$bin" verify --index "$index" --pool "$pool" --keys "$acked" "${extra[@]}" 2>&1) ||
      fail "verify --keys $acked after a kill at ${delay_ms}ms (ack every $ack): $vout"
    echo "round $r: delay ${delay_ms}ms, ack every $ack, $what, $acked acked: verified"
  fi
  lout=$("$bin" load --index "$index" --pool "$pool" --pool-size "$pool_size" --keys "$keys" "${extra[@]}" 2>&1) ||
    fail "re-running the load to completion failed: $lout"
  vout=$("$bin" verify --index "$index" --pool "$pool" --keys "$keys" "${extra[@]}" 2>&1) ||
    fail "verify --keys $keys after reload: $vout"
done
echo "kill_verify: $rounds rounds passed"
