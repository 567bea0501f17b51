"""SIGKILL mid-load, restart: every acknowledged write is there with its value and flags."""
import os
import re
import signal

import pytest
from pymemcache.client.base import Client

from conftest import LONG

N = 1_000_000 if LONG else 100_000
POOL = "1G" if LONG else "256M"


def key(i):
    return b"dk%07d" % i


def value(i):
    return (b"%d:" % i) * (1 + i % 40)  # 3..400 bytes, tells its key apart


def flags(i):
    return (i * 2654435761) % (1 << 32)


def load(server, lo, hi, kill_at=None, window=64):
    """Sets keys [lo, hi), `window` pipelined; returns the keys acknowledged
    (in order) and, if the server was killed at `kill_at` acks, those in flight."""
    s = server.connect(timeout=30)
    acked, sent = [], lo
    buf = b""
    inflight = []
    killed = False
    while len(acked) < hi - lo:
        batch = range(sent, min(hi, sent + window))
        req = b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (key(i), flags(i), len(value(i)), value(i)) for i in batch)
        try:
            s.sendall(req)
        except OSError:
            break
        inflight.extend(batch)
        sent += len(batch)
        if kill_at is not None and not killed and len(acked) >= kill_at:
            server.proc.send_signal(signal.SIGKILL)  # with a batch in flight
            killed = True
        while inflight:
            nl = buf.find(b"\r\n")
            if nl < 0:
                try:
                    chunk = s.recv(65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                buf += chunk
                continue
            assert buf[:nl] == b"STORED", buf[:nl]
            buf = buf[nl + 2:]
            acked.append(inflight.pop(0))
        if inflight:  # the connection broke
            break
    s.close()
    return acked, inflight


def verify(server, keys, inflight=()):
    c = Client(("127.0.0.1", server.port), default_noreply=False, timeout=60,
               serde=type("S", (), {"serialize": lambda s, k, v: (v, 0),
                                    "deserialize": lambda s, k, v, f: (v, f)})())
    for j in range(0, len(keys), 200):
        chunk = keys[j:j + 200]
        got = c.get_many([key(i).decode() for i in chunk])
        for i in chunk:
            assert got.get(key(i).decode()) == (value(i), flags(i)), f"acknowledged key {i} lost or wrong"
    for i in inflight:  # in flight at the kill: wholly there or absent
        v = c.get(key(i).decode())
        assert v is None or v == (value(i), flags(i))
    c.close()


@pytest.mark.parametrize("index", ["fptree", "woart"])
def test_sigkill_keeps_acknowledged(server_factory, pool_path, index):
    pool = pool_path()
    srv = server_factory(index=index, pool=pool, args=["--threads", "2"], pool_size=POOL).start()
    acked, inflight = load(srv, 0, N, kill_at=N * 2 // 5)
    srv.proc.wait()
    assert srv.proc.returncode == -signal.SIGKILL
    print(f"{index}: {len(acked)} acknowledged, {len(inflight)} in flight at the SIGKILL")
    assert N // 3 < len(acked) < N
    srv.logf.close()
    srv2 = server_factory(index=index, pool=pool, args=["--threads", "2"], pool_size=POOL).start()
    log = srv2.read_log()
    assert "recovered after a crash" in log, log
    restart = re.search(r"restart took ([0-9.]+) s", log)
    assert restart
    print(f"{index}: restart after SIGKILL took {restart.group(1)} s")
    verify(srv2, acked, inflight)
    # the rest loads and everything survives a clean restart too
    rest, _ = load(srv2, acked[-1] + 1 if acked else 0, N)
    assert srv2.stop() == 0
    srv3 = server_factory(index=index, pool=pool, pool_size=POOL).start()
    assert "reopened after a clean shutdown" in srv3.read_log()
    verify(srv3, acked + rest)
    assert srv3.stop() == 0
    os.unlink(pool)
