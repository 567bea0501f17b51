"""Fixtures of the `pmindex serve` tests: servers on loopback, pools in /dev/shm.

PMINDEX_BIN names the pmindex binary (ctest sets it); PMINDEX_SERVE_INDEX the
index the servers run (default fptree); PMINDEX_LONG=1 scales the loads up.
"""
import os
import signal
import socket
import subprocess
import time
import uuid

import pytest

BIN = os.environ.get("PMINDEX_BIN", os.path.join(os.path.dirname(__file__), "../../build/dev/pmindex"))
INDEX = os.environ.get("PMINDEX_SERVE_INDEX", "fptree")
LONG = os.environ.get("PMINDEX_LONG") == "1"


class Server:
    """One `pmindex serve` process on 127.0.0.1 and an ephemeral port."""

    def __init__(self, pool, index=INDEX, args=(), pool_size="256M"):
        self.pool, self.index, self.args, self.pool_size = pool, index, list(args), pool_size
        self.proc = None
        self.port = None
        self.log = pool + ".log"

    def start(self, port=0, timeout=60):
        ready = self.pool + ".ready"
        if os.path.exists(ready):
            os.unlink(ready)
        cmd = [BIN, "serve", "--index", self.index, "--pool", self.pool, "--pool-size", self.pool_size,
               "--listen", f"127.0.0.1:{port}", "--ready-file", ready] + self.args
        self.logf = open(self.log, "a")
        self.proc = subprocess.Popen(cmd, stdout=self.logf, stderr=self.logf)
        deadline = time.monotonic() + timeout
        while not os.path.exists(ready):
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.read_log()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("server did not start: " + self.read_log())
            time.sleep(0.02)
        with open(ready) as f:
            self.port = int(f.read())
        os.unlink(ready)
        return self

    def read_log(self):
        with open(self.log) as f:
            return f.read()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.logf.close()

    def stop(self, timeout=60):
        """SIGTERM: a clean shutdown; returns the exit code. A server still
        running after `timeout` seconds fails the test with its log and, where
        gdb is installed, every thread's stack (what it waited for)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                stacks = self.stacks()
                self.proc.kill()
                self.proc.wait()
                self.logf.close()
                raise RuntimeError(f"server did not stop within {timeout} s of SIGTERM\n--- log ---\n"
                                   f"{self.read_log()}--- threads ---\n{stacks}") from None
        self.logf.close()
        return self.proc.returncode

    def stacks(self):
        try:
            r = subprocess.run(["gdb", "-p", str(self.proc.pid), "-batch", "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=120)
            return r.stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"(no stacks: {e})"

    def connect(self, timeout=10):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s


@pytest.fixture
def pool_path():
    paths = []

    def make():
        p = f"/dev/shm/pmindex-serve-test-{os.getpid()}-{uuid.uuid4().hex[:8]}.pool"
        paths.append(p)
        return p

    yield make
    for p in paths:
        for f in (p, p + ".log", p + ".ready"):
            if os.path.exists(f):
                os.unlink(f)


@pytest.fixture
def server_factory(pool_path):
    servers = []

    def make(index=INDEX, args=(), pool_size="256M", pool=None):
        s = Server(pool or pool_path(), index, args, pool_size)
        servers.append(s)
        return s

    yield make
    for s in servers:
        if s.proc and s.proc.poll() is None:
            s.kill()


@pytest.fixture
def server(server_factory):
    s = server_factory(args=["--threads", "2", "--sweep-interval", "1"]).start()
    yield s
    assert s.stop() == 0, s.read_log()


def recv_until(sock, marker, limit=1 << 24):
    """Reads until `marker` ends the data (or the peer closes)."""
    data = b""
    while not data.endswith(marker) and len(data) < limit:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def exchange(sock, payload, marker=b"\r\n"):
    sock.sendall(payload)
    return recv_until(sock, marker)
