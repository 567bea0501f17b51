#!/bin/sh
# The runs behind docs/results/server.md: `pmindex serve` over radix trees and
# B-trees beside stock memcached, driven by pmindex_mcload in the manner of
# mc-benchmark (SET phase then GET phase, 20-byte keys "foo_rand" + 12 digits
# uniform over a key space of N, one request in flight per connection).
# Usage: docs/results/server_bench.sh BUILD_DIR OUT.jsonl [N] [REPS] [VALUE_SIZE]
# Release build: cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMINDEX_TESTS=OFF
#                ninja -C build/release pmindex pmindex_mcload
# Each run starts a fresh server (new pool in /dev/shm, persist mode, 2 worker
# threads) and stops it after; targets are interleaved within each repetition.
set -e
build=$1; out=$2; n=${3:-500000}; reps=${4:-3}; vsize=${5:-32}
targets=${TARGETS:-"woart wort permart fptree lbtree memcached"}
pool=/dev/shm/server-bench.pool
port=21911
: > "$out"
for rep in $(seq 1 "$reps"); do
  for conns in 4 50; do
    for t in $targets; do
      rm -f "$pool" /tmp/server-bench.ready
      if [ "$t" = memcached ]; then
        memcached -u root -l 127.0.0.1 -p $port -t 2 -m 4096 -c 1024 -U 0 & pid=$!
        sleep 0.5
      else
        "$build/pmindex" serve --index "$t" --pool "$pool" --pool-size 4G --listen 127.0.0.1:$port --threads 2 \
          --ready-file /tmp/server-bench.ready 2>/dev/null & pid=$!
        while [ ! -f /tmp/server-bench.ready ]; do sleep 0.05; done
      fi
      "$build/server/pmindex_mcload" --port $port --conns $conns --requests "$n" --keyspace "$n" \
        --value-size "$vsize" --phases set,get --label "$t rep$rep" >> "$out"
      kill $pid; wait $pid || true
    done
  done
done
rm -f "$pool"
