"""3 `pmindex serve` processes behind twemproxy (nutcracker, ketama): 100k keys
through the proxy, one server SIGKILLed mid-load and restarted, every
acknowledged key readable through the proxy. The config is docs/server.md's."""
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from conftest import LONG
from test_durability import flags, key, value

N = 1_000_000 if LONG else 100_000
NUTCRACKER = shutil.which("nutcracker") or "/usr/sbin/nutcracker"

CONFIG = """pmindex:
  listen: 127.0.0.1:{listen}
  hash: fnv1a_64
  distribution: ketama
  timeout: 5000
  backlog: 1024
  preconnect: true
  auto_eject_hosts: false
  server_retry_timeout: 500
  server_failure_limit: 1
  servers:
{servers}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proxy_load(port, keys, window=64):
    """Sets `keys` through the proxy; returns those acknowledged (STORED)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    acked = []
    buf = b""
    for j in range(0, len(keys), window):
        batch = keys[j:j + window]
        s.sendall(b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (key(i), flags(i), len(value(i)), value(i))
                           for i in batch))
        for i in batch:
            while b"\r\n" not in buf:
                chunk = s.recv(65536)
                assert chunk, "proxy closed the connection"
                buf += chunk
            line, buf = buf.split(b"\r\n", 1)
            if line == b"STORED":
                acked.append(i)
            else:
                assert line.startswith(b"SERVER_ERROR"), line  # the killed server's share
        yield_point = len(acked)
        if proxy_load.on_progress:
            proxy_load.on_progress(yield_point)
    s.close()
    return acked


proxy_load.on_progress = None


def proxy_get_many(port, keys):
    """{key id: (value, flags)} read through the proxy, retrying keys whose
    server the proxy is still reconnecting to."""
    out = {}
    todo = list(keys)
    deadline = time.monotonic() + 120
    while todo and time.monotonic() < deadline:
        retry = []
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        for j in range(0, len(todo), 100):
            batch = todo[j:j + 100]
            s.sendall(b"get " + b" ".join(key(i) for i in batch) + b"\r\n")
            buf = b""
            while not (buf.endswith(b"END\r\n") or buf.startswith(b"SERVER_ERROR") and buf.endswith(b"\r\n")):
                chunk = s.recv(1 << 20)
                assert chunk
                buf += chunk
            if buf.startswith(b"SERVER_ERROR"):
                retry.extend(batch)
                continue
            pos = 0
            while buf.startswith(b"VALUE ", pos):
                nl = buf.index(b"\r\n", pos)
                _, k, f, n = buf[pos:nl].split()
                data = buf[nl + 2:nl + 2 + int(n)]
                out[int(k[2:])] = (data, int(f))
                pos = nl + 2 + int(n) + 2
        s.close()
        todo = retry
        if todo:
            time.sleep(0.5)
    return out


@pytest.mark.skipif(not os.path.exists(NUTCRACKER), reason="nutcracker (Debian package) not installed")
def test_twemproxy_sigkill_one_server(server_factory, tmp_path):
    ports = [free_port() for _ in range(3)]
    servers = [server_factory(args=["--threads", "1"], pool_size="1G" if LONG else "128M") for _ in range(3)]
    for s, p in zip(servers, ports):
        s.start(port=p)
    listen, stats = free_port(), free_port()
    conf = tmp_path / "nutcracker.yml"
    conf.write_text(CONFIG.format(listen=listen, servers="\n".join(
        f"   - 127.0.0.1:{p}:1 pmindex{n}" for n, p in enumerate(ports))))
    assert subprocess.run([NUTCRACKER, "-t", "-c", str(conf)], capture_output=True).returncode == 0
    log = tmp_path / "nutcracker.log"
    proxy = subprocess.Popen([NUTCRACKER, "-c", str(conf), "-s", str(stats), "-a", "127.0.0.1", "-o", str(log)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", listen), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proxy.poll() is None
                time.sleep(0.1)
        victim = servers[1]

        def kill_midway(acked):
            if acked >= N * 2 // 5 and victim.proc.poll() is None:
                victim.proc.send_signal(signal.SIGKILL)
                victim.proc.wait()

        proxy_load.on_progress = kill_midway
        acked = proxy_load(listen, list(range(N)))
        proxy_load.on_progress = None
        assert victim.proc.returncode == -signal.SIGKILL
        print(f"{len(acked)} of {N} sets acknowledged through the proxy; server 1 killed at {N * 2 // 5}")
        assert N // 2 < len(acked) < N  # the other two servers' shares went on
        victim.logf.close()
        victim.start(port=ports[1])
        assert "recovered after a crash" in victim.read_log()
        got = proxy_get_many(listen, acked)
        missing = [i for i in acked if got.get(i) != (value(i), flags(i))]
        assert not missing, f"{len(missing)} acknowledged keys lost, e.g. {missing[:5]}"
    finally:
        proxy.send_signal(signal.SIGTERM)
        proxy.wait(timeout=30)
    for s in servers:
        assert s.stop() == 0
