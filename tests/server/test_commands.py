"""Every command of `pmindex serve` through pymemcache, a client not written here."""
import time

import pytest
from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheClientError, MemcacheIllegalInputError, MemcacheServerError

from conftest import exchange


class FlagsSerde:
    """Keeps values as bytes and returns (value, flags), so flags are checked."""

    def serialize(self, key, value):
        if isinstance(value, tuple):
            return value
        return value, 0

    def deserialize(self, key, value, flags):
        return value, flags


def client(server, **kw):
    return Client(("127.0.0.1", server.port), default_noreply=False, serde=FlagsSerde(), connect_timeout=10,
                  timeout=30, **kw)


def test_set_get_flags(server):
    c = client(server)
    assert c.set("k1", (b"hello", 42))
    assert c.get("k1") == (b"hello", 42)
    assert c.set("k1", (b"", 4294967295))
    assert c.get("k1") == (b"", 4294967295)
    assert c.get("absent") is None
    big = bytes(range(256)) * 4000  # binary data with \r\n inside
    assert c.set("big", big)
    assert c.get("big") == (big, 0)


def test_get_many_and_gets(server):
    c = client(server)
    for i in range(50):
        c.set(f"m{i}", (f"v{i}".encode(), i))
    got = c.get_many([f"m{i}" for i in range(60)])
    assert len(got) == 50
    assert all(got[f"m{i}"] == (f"v{i}".encode(), i) for i in range(50))
    v, cas = c.gets("m1")
    assert v == (b"v1", 1) and int(cas) > 0
    many = c.gets_many(["m1", "m2", "nope"])
    assert set(many) == {"m1", "m2"}
    assert many["m1"][1] == cas


def test_add_replace(server):
    c = client(server)
    assert c.add("a", b"1")
    assert not c.add("a", b"2")
    assert c.get("a") == (b"1", 0)
    assert not c.replace("nope", b"x")
    assert c.replace("a", (b"3", 7))
    assert c.get("a") == (b"3", 7)


def test_append_prepend_keep_flags(server):
    c = client(server)
    assert not c.append("ap", b"x")
    assert not c.prepend("ap", b"x")
    c.set("ap", (b"mid", 9))
    assert c.append("ap", b"-end")
    assert c.prepend("ap", b"start-")
    assert c.get("ap") == (b"start-mid-end", 9)


def test_cas(server):
    c = client(server)
    assert c.cas("nope", b"x", b"1") is None  # NOT_FOUND
    c.set("c", b"1")
    _, cas = c.gets("c")
    assert c.cas("c", b"2", cas)
    assert c.get("c") == (b"2", 0)
    assert c.cas("c", b"3", cas) is False  # EXISTS: the cas id changed
    _, cas2 = c.gets("c")
    assert cas2 != cas


def test_delete(server):
    c = client(server)
    c.set("d", b"x")
    assert c.delete("d")
    assert not c.delete("d")
    assert c.get("d") is None
    assert exchange(server.connect(), b"delete d 0\r\n") == b"NOT_FOUND\r\n"


def test_incr_decr(server):
    c = client(server)
    assert c.incr("n", 1) is None
    c.set("n", b"10")
    assert c.incr("n", 5) == 15
    assert c.decr("n", 20) == 0  # decr stops at 0
    c.set("n", b"18446744073709551615")
    assert c.incr("n", 2) == 1  # incr wraps at 2^64
    c.set("s", b"abc")
    with pytest.raises(MemcacheClientError):
        c.incr("s", 1)
    assert c.get("n") == (b"1", 0)


def test_touch_and_expiry(server):
    c = client(server)
    c.set("e1", b"x", expire=1)
    c.set("e2", b"y", expire=1)
    c.set("keep", b"z", expire=0)
    assert c.touch("e2", 100)
    assert not c.touch("nope", 1)
    c.set("neg", b"gone", expire=-1)  # negative: stored, already expired
    assert c.get("neg") is None
    time.sleep(2.2)
    assert c.get("e1") is None  # expired on read
    assert c.get("e2") == (b"y", 0)
    assert c.get("keep") == (b"z", 0)
    # the sweeper (every second here) removes expired items
    deadline = time.monotonic() + 30
    while int(c.stats()[b"expired_swept"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert int(c.stats()[b"expired_swept"]) >= 2


def test_flush_all(server):
    c = client(server)
    for i in range(100):
        c.set(f"f{i}", b"x")
    assert c.flush_all()
    assert c.get_many([f"f{i}" for i in range(100)]) == {}
    assert int(c.stats()[b"curr_items"]) == 0
    c.set("later", b"x")
    assert c.flush_all(delay=1)
    assert c.get("later") == (b"x", 0)
    deadline = time.monotonic() + 30
    while c.get("later") is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert c.get("later") is None


def test_stats_version_verbosity(server):
    c = client(server)
    c.set("x", b"1")
    c.get("x")
    st = c.stats()
    assert int(st[b"cmd_set"]) >= 1 and int(st[b"get_hits"]) >= 1 and int(st[b"curr_items"]) == 1
    assert int(st[b"threads"]) == 2
    assert c.stats("settings")[b"num_threads"] == b"2" or int(c.stats("settings")[b"num_threads"]) == 2
    assert c.version().startswith(b"1.6")
    assert c.raw_command("verbosity 1", b"\r\n") == b"OK"
    assert c.raw_command("stats reset", b"\r\n") == b"RESET"  # as memcached (pymemcache.stats() expects END)
    assert int(c.stats()[b"cmd_set"]) == 0


def test_noreply(server):
    c = Client(("127.0.0.1", server.port), default_noreply=True)
    assert c.set("nr", b"1")  # noreply: the client does not wait
    assert c.add("nr2", b"2")
    c.delete("nr2", noreply=True)
    c.incr("nr", 1, noreply=True)
    c.touch("nr", 100, noreply=True)
    assert c.get("nr") == b"2"
    assert c.get("nr2") is None


def test_quit(server):
    c = client(server)
    c.set("q", b"1")
    c.quit()
    s = server.connect()
    assert exchange(s, b"get q\r\nquit\r\nget q\r\n", b"END\r\n") == b"VALUE q 0 1\r\n1\r\nEND\r\n"
    assert s.recv(100) == b""  # closed after quit, the last get unanswered


def test_pipelining(server):
    s = server.connect()
    req = b"".join(b"set p%d 0 0 2\r\nv%d\r\n" % (i, i % 10) for i in range(500))
    req += b"".join(b"get p%d\r\n" % i for i in range(500))
    s.sendall(req)
    want = b"STORED\r\n" * 500 + b"".join(b"VALUE p%d 0 2\r\nv%d\r\nEND\r\n" % (i, i % 10) for i in range(500))
    got = b""
    while len(got) < len(want):
        chunk = s.recv(1 << 16)
        assert chunk
        got += chunk
    assert got == want


def test_client_rejects(server):
    c = client(server)
    with pytest.raises(MemcacheIllegalInputError):
        c.set("a" * 251, b"x")  # pymemcache checks too; the server is checked in test_protocol_errors
    with pytest.raises(MemcacheServerError):
        c.set("huge", b"x" * (1 << 20))  # over 1 MiB less the item header


def test_stop_before_workers_run(server_factory):
    """SIGTERM as soon as the server listens, with more workers than cores: a
    worker thread may not have entered its event loop yet. Shutdown used to
    break each loop from the main thread, which is lost on a loop not yet
    running, and then joined that worker forever (CI: server hung 60 s after
    SIGTERM; here 6 of 20 starts with 16 threads)."""
    for _ in range(10):
        s = server_factory(args=["--threads", "16"], pool_size="64M").start()
        assert s.stop(timeout=20) == 0, s.read_log()
