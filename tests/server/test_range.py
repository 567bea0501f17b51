"""The ordered range read `mr`, through a small client written here: binary
keys and values, the count limit and its continuation key, [lo, hi] bounds,
a reply far longer than what the server buffers, and the error of an
unordered index."""
import base64
import random
import socket

import pytest

from conftest import recv_until


class RangeClient:
    """Reads mr replies: VA/HD record lines (k<key>, b, f, t, c, s), then EN
    or CN k<next>."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            assert chunk, "connection closed mid-reply"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _block(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 20)
            assert chunk, "connection closed mid-value"
            self.buf += chunk
        data, end, self.buf = self.buf[:n], self.buf[n:n + 2], self.buf[n + 2:]
        assert end == b"\r\n"
        return data

    @staticmethod
    def _key(tokens):
        k = next(t[1:] for t in tokens if t.startswith(b"k"))
        return base64.b64decode(k, validate=True) if b"b" in tokens else k

    def mr(self, start, *flags):
        """Returns (records, next key or None, terminator tokens)."""
        self.sock.sendall(b" ".join([b"mr", start, *flags]) + b"\r\n")
        return self.reply()

    def reply(self):
        records = []
        while True:
            tok = self._line().split(b" ")
            if tok[0] == b"VA":
                records.append((self._key(tok[2:]), self._block(int(tok[1])), tok[2:]))
            elif tok[0] == b"HD":
                records.append((self._key(tok[1:]), None, tok[1:]))
            elif tok[0] == b"EN":
                return records, None, tok
            elif tok[0] == b"CN":
                return records, self._key(tok[1:]), tok
            else:
                raise AssertionError(b" ".join(tok))


def b64(k):
    return base64.b64encode(k)


def fill(sock, items):
    payload = b"".join(b"ms %s %d b F%d\r\n%s\r\n" % (b64(k), len(v), len(k), v) for k, v in items.items())
    sock.sendall(payload + b"mn\r\n")
    replies = recv_until(sock, b"MN\r\n")
    assert replies == b"HD\r\n" * len(items) + b"MN\r\n", replies[:200]


def random_items(rng, n, max_value=64):
    items = {}
    while len(items) < n:
        k = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 17)))  # btree: keys of up to 16 bytes
        items[k] = bytes(rng.randrange(256) for _ in range(rng.randrange(0, max_value)))
    return items


@pytest.mark.parametrize("index,args,max_value", [("fptree", [], 200), ("permart", [], 200),
                                                  ("btree", ["-I", "208"], 64)])
def test_range_binary_keys_values_in_order(server_factory, index, args, max_value):
    srv = server_factory(index=index, args=args).start()
    rng = random.Random(7)
    items = random_items(rng, 500, max_value=max_value)
    s = srv.connect()
    fill(s, items)
    c = RangeClient(s)
    recs, nxt, _ = c.mr(b"AA==", b"b", b"v", b"f", b"s")
    assert nxt is None
    assert [k for k, _, _ in recs] == sorted(items)
    for k, v, tok in recs:
        assert v == items[k] and b"f%d" % len(k) in tok and b"s%d" % len(v) in tok
    assert srv.stop() == 0


def test_range_limit_and_continuation(server):
    rng = random.Random(11)
    items = random_items(rng, 300)
    s = server.connect()
    fill(s, items)
    c = RangeClient(s)
    got, start, pages = [], b"AA==", 0
    while True:
        recs, nxt, _ = c.mr(start, b"b", b"v", b"L7")
        assert len(recs) == 7 or nxt is None
        got += [(k, v) for k, v, _ in recs]
        pages += 1
        if nxt is None:
            break
        start = b64(nxt)
    assert got == sorted(items.items()) and pages == (300 + 6) // 7
    # L0: no record, only where the range goes on
    recs, nxt, _ = c.mr(b"AA==", b"b", b"L0")
    assert recs == [] and nxt == min(items)


def test_range_bounds(server):
    s = server.connect()
    keys = [b"key%03d" % i for i in range(100)]
    fill(s, {k: k[::-1] for k in keys})
    c = RangeClient(s)
    recs, nxt, _ = c.mr(b"key010", b"Hkey019", b"v")
    assert [(k, v) for k, v, _ in recs] == [(k, k[::-1]) for k in keys[10:20]] and nxt is None
    recs, nxt, _ = c.mr(b"key010x", b"Hkey013")  # bounds need not be keys
    assert [k for k, _, _ in recs] == keys[11:14] and all(v is None for _, v, _ in recs)
    recs, nxt, _ = c.mr(b"key050", b"Hkey059", b"L3")
    assert [k for k, _, _ in recs] == keys[50:53] and nxt == keys[53]
    recs, nxt, _ = c.mr(b"key090", b"Hkey089")  # empty range
    assert recs == [] and nxt is None
    recs, nxt, end = c.mr(b"zzz", b"O42")
    assert recs == [] and end == [b"EN", b"O42"]


def test_range_text_listing_of_binary_keys(server):
    s = server.connect()
    fill(s, {b"plain": b"1", b"with space": b"2", b"ctl\x01": b"3"})
    c = RangeClient(s)
    recs, _, _ = c.mr(b"!")
    keys = [k for k, _, _ in recs]
    assert keys == sorted([b"plain", b"with space", b"ctl\x01"])
    # a key a text line cannot carry comes base64 with b, the others as they are
    for k, _, tok in recs:
        assert (b"b" in tok) == (k == b"with space"), tok


def test_range_skips_expired_and_deleted(server):
    s = server.connect()
    s.sendall(b"set a 0 0 1\r\n1\r\nset b 0 -1 1\r\n2\r\nset c 0 0 1\r\n3\r\ndelete c\r\nset d 0 0 1\r\n4\r\n")
    assert recv_until(s, b"STORED\r\nSTORED\r\nSTORED\r\nDELETED\r\nSTORED\r\n")
    recs, _, _ = RangeClient(s).mr(b"a", b"v", b"t", b"c")
    assert [(k, v) for k, v, _ in recs] == [(b"a", b"1"), (b"d", b"4")]
    assert all(b"t-1" in tok and any(t.startswith(b"c") for t in tok) for _, _, tok in recs)


def test_range_streams_long_replies(server):
    """40 MiB of records in one reply (the server sends it in parts), with
    commands pipelined behind it answered after it, in order."""
    s = server.connect()
    n, value = 20000, b"v" * 2000
    for base in range(0, n, 2000):
        s.sendall(b"".join(b"ms r%06d %d q\r\n%s\r\n" % (i, len(value), value) for i in range(base, base + 2000)))
    s.sendall(b"mr r v\r\nmn\r\nmr r L5\r\n")
    c = RangeClient(s)
    recs, nxt, _ = c.reply()
    assert len(recs) == n and nxt is None
    assert [k for k, _, _ in recs] == [b"r%06d" % i for i in range(n)] and all(v == value for _, v, _ in recs)
    assert c._line() == b"MN"
    recs, nxt, _ = c.reply()
    assert [k for k, _, _ in recs] == [b"r%06d" % i for i in range(5)] and nxt == b"r000005"
    # a client that closes its sending side after the command still gets all of the reply
    t = server.connect()
    t.sendall(b"mr r v\r\n")
    t.shutdown(socket.SHUT_WR)
    recs, nxt, _ = RangeClient(t).reply()
    assert len(recs) == n and nxt is None


def test_range_errors(server_factory):
    srv = server_factory(index="hashtable").start()
    s = srv.connect()
    s.sendall(b"set a 0 0 1\r\n1\r\nmr a v\r\nmn\r\n")
    assert recv_until(s, b"MN\r\n") == b"STORED\r\nSERVER_ERROR mr needs an ordered index; hashtable is not\r\nMN\r\n"
    assert srv.stop() == 0
    srv = server_factory().start()
    s = srv.connect()
    for line, reply in [(b"mr\r\n", b"CLIENT_ERROR bad command line format\r\n"),
                        (b"mr a Lx\r\n", b"CLIENT_ERROR bad token in command line format\r\n"),
                        (b"mr a Z\r\n", b"CLIENT_ERROR invalid flag\r\n"),
                        (b"mr a v v\r\n", b"CLIENT_ERROR duplicate flag\r\n"),
                        (b"mr a! b\r\n", b"CLIENT_ERROR error decoding key\r\n")]:
        s.sendall(line)
        assert recv_until(s, b"\r\n") == reply, line
    assert srv.stop() == 0
