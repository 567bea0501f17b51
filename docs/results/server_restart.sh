#!/bin/sh
# Restart time of a `pmindex serve` holding N items (default 10M): N SETs of
# distinct 20-byte keys (32-byte values) through the server, then SIGKILL and
# restart (recovery: the index's repair + tracing the heap), then SIGTERM and
# restart (clean: the allocator state is read back). After each restart 200k
# random GETs must all hit. Prints one JSON object per index.
# Usage: docs/results/server_restart.sh BUILD_DIR [N] [INDEXES]
set -e
build=$1; n=${2:-10000000}; indexes=${3:-"fptree woart"}
pool=/dev/shm/server-restart.pool; ready=/tmp/server-restart.ready; log=/tmp/server-restart.log; port=21912
serve() {
  rm -f $ready
  "$build/pmindex" serve --index "$1" --pool $pool --pool-size ${POOL_SIZE:-6G} --listen 127.0.0.1:$port --threads 2 \
    --ready-file $ready 2>>$log & pid=$!
  while [ ! -f $ready ]; do sleep 0.1; done
}
check() {
  "$build/server/pmindex_mcload" --port $port --conns 4 --requests 200000 --keyspace "$n" --phases get |
    python3 -c "import json,sys; j=json.loads(sys.stdin.read()); assert j['hits']==j['requests'], j"
}
took() { grep -o "$1; restart took [0-9.]*" $log | tail -1 | awk '{print $NF}'; }
ready() { grep -o "[0-9.]* s after opening began" $log | tail -1 | awk '{print $1}'; }
for idx in $indexes; do
  rm -f $pool $log
  serve "$idx"
  load=$("$build/server/pmindex_mcload" --port $port --conns 50 --requests "$n" --sequential 1 --phases set)
  kill -9 $pid; wait $pid || true
  serve "$idx"; check
  dirty=$(took "recovered after a crash"); dirty_ready=$(ready)
  kill $pid; wait $pid
  serve "$idx"; check
  clean=$(took "reopened after a clean shutdown"); clean_ready=$(ready)
  python3 -c "
import socket; s = socket.create_connection(('127.0.0.1', $port)); s.sendall(b'stats\r\n'); d = b''
while not d.endswith(b'END\r\n'): d += s.recv(65536)
open('/tmp/server-restart.stats', 'wb').write(d)"
  kill $pid; wait $pid
  used=$(grep -o "STAT bytes [0-9]*" /tmp/server-restart.stats | awk '{print $3}')
  echo "{\"index\": \"$idx\", \"items\": $n, \"restart_after_sigkill_s\": $dirty, \"restart_after_clean_stop_s\": $clean, \"listening_after_sigkill_s\": $dirty_ready, \"listening_after_clean_stop_s\": $clean_ready, \"pool_bytes_used\": $used, \"load\": $load}"
  rm -f $pool
done
