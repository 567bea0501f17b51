"""Range-partitioned shards of `pmindex serve`: a small client for ordered reads.

Each `pmindex serve` process owns one contiguous key range; the ranges are
given by sorted split keys. Point operations go to the shard owning the key;
`range(lo, hi)` reads the shards whose ranges meet [lo, hi] one after the
other, in key order, with the server's ordered range read `mr`, so the
concatenation is the global key order.

    from pmindex import shards
    db = shards.ShardedClient([(None, "127.0.0.1:11211"),
                               (b"g", "127.0.0.1:11212"),
                               (b"p", "127.0.0.1:11213")])
    db.set(b"apple", b"1")
    for key, value in db.range(b"a", b"k"):
        ...

What it does not guarantee: a range is not a snapshot across shards, nor
within one shard across its `CN` continuations (each request has the
index's own scan guarantee, see docs/server.md); a shard that cannot be
reached raises ShardError rather than giving a partial result. A client is
not thread-safe: use one per thread.

This module uses only the standard library and never the compiled module,
so the file also works on its own (copied next to a program, or loaded by
path) where pmindex itself is not built.
"""

import base64
import bisect
import socket

__all__ = ["ShardError", "ShardedClient"]

_FIRST_KEY = b"\x00"  # keys never start with NUL, so mr starts at the first key from here


class ShardError(Exception):
    """A shard that cannot be reached or answers with an error; `address`
    names the shard ("host:port")."""

    def __init__(self, address, message):
        super().__init__(f"{address}: {message}")
        self.address = address


def _as_bytes(key):
    return key.encode() if isinstance(key, str) else bytes(key)


def _key(key):
    """A key of a point operation: the server takes any bytes but a leading NUL."""
    key = _as_bytes(key)
    if not key or key[0] == 0:
        raise ValueError(f"key {key!r} is empty or starts with NUL (the server takes neither)")
    return key


def _b64(key):
    return base64.b64encode(key)


def _host_port(address):
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"shard address {address!r} is not host:port")
    return host.strip("[]"), int(port)


class _Connection:
    """One socket to one server, with a read buffer for lines and data blocks."""

    def __init__(self, address, timeout):
        self.sock = socket.create_connection(_host_port(address), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("connection closed by the server")
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def block(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, end, self.buf = self.buf[:n], self.buf[n:n + 2], self.buf[n + 2:]
        if end != b"\r\n":
            raise ConnectionError("data block not followed by CRLF")
        return data


class ShardedClient:
    """Routes keys to range-partitioned `pmindex serve` shards.

    `shards` is a list of (lo, "host:port"): the first lo is None, the others
    are strictly increasing split keys (bytes or str); a shard owns the keys
    from its lo up to (excluding) the next shard's lo. Keys and values are
    bytes (a str is UTF-8 encoded). `batch` is how many records one `mr`
    request asks for; `timeout` the socket timeout in seconds."""

    def __init__(self, shards, batch=1000, timeout=10.0):
        shards = list(shards)
        if not shards:
            raise ValueError("no shards")
        if shards[0][0] is not None:
            raise ValueError("the first shard's lo must be None (it owns the lowest keys)")
        splits = [_as_bytes(lo) if lo is not None else None for lo, _ in shards[1:]]
        if any(s is None or not s for s in splits):
            raise ValueError("every shard after the first needs a non-empty lo key")
        if any(a >= b for a, b in zip(splits, splits[1:])):
            raise ValueError("shard lo keys must be strictly increasing")
        if batch < 1:
            raise ValueError("batch must be at least 1")
        for _, addr in shards:
            _host_port(addr)
        self.splits = splits
        self.addresses = [addr for _, addr in shards]
        self.batch = batch
        self.timeout = timeout
        self._conns = {}

    @classmethod
    def from_splits(cls, splits, addresses, **kwargs):
        """Shards from n-1 sorted split keys and n addresses."""
        if len(addresses) != len(splits) + 1:
            raise ValueError("n addresses need n-1 split keys")
        return cls([(None, addresses[0])] + list(zip(splits, addresses[1:])), **kwargs)

    def close(self):
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def shard_of(self, key):
        """The index (into the shard list) of the shard owning `key`."""
        return bisect.bisect_right(self.splits, _as_bytes(key))

    def _upper(self, i):
        """The first key shard i does not own (None: the last shard)."""
        return self.splits[i] if i < len(self.splits) else None

    def _call(self, i, request, read):
        """Sends `request` to shard i and returns read(connection); any
        failure drops the connection (its state is unknown) and raises
        ShardError."""
        address = self.addresses[i]
        try:
            conn = self._conns.get(i)
            if conn is None:
                conn = self._conns[i] = _Connection(address, self.timeout)
            conn.send(request)
            return read(conn)
        except (OSError, ValueError) as e:  # ValueError: a reply that does not parse
            dropped = self._conns.pop(i, None)
            if dropped is not None:
                dropped.close()
            raise ShardError(address, str(e) or type(e).__name__) from e

    @staticmethod
    def _fail(conn, line):
        raise ConnectionError("unexpected reply: " + line.decode(errors="replace")[:200])

    def get(self, key):
        """The value of `key`, or None."""
        key = _key(key)

        def read(conn):
            line = conn.line()
            if line == b"EN":
                return None
            tok = line.split(b" ")
            if tok[0] != b"VA" or len(tok) < 2:
                self._fail(conn, line)
            return conn.block(int(tok[1]))

        return self._call(self.shard_of(key), b"mg %s b v\r\n" % _b64(key), read)

    def set(self, key, value, flags=0, ttl=0):
        """Stores `value` under `key` (durable when this returns)."""
        key, value = _key(key), _as_bytes(value)

        def read(conn):
            line = conn.line()
            if line != b"HD":
                self._fail(conn, line)

        request = b"ms %s %d b F%d T%d\r\n%s\r\n" % (_b64(key), len(value), flags, ttl, value)
        self._call(self.shard_of(key), request, read)

    def delete(self, key):
        """Removes `key`; True if it was there."""
        key = _key(key)

        def read(conn):
            line = conn.line()
            if line not in (b"HD", b"NF"):
                self._fail(conn, line)
            return line == b"HD"

        return self._call(self.shard_of(key), b"md %s b\r\n" % _b64(key), read)

    def _mr(self, i, start, hi, count):
        """One `mr` request to shard i: (records, next key or None)."""
        request = b"mr %s b v L%d" % (_b64(start), count)
        if hi is not None:
            request += b" H" + _b64(hi)
        upper = self._upper(i)

        def key_of(tokens):
            k = next((t[1:] for t in tokens if t.startswith(b"k")), None)
            if k is None:
                raise ConnectionError("mr record without a key")
            return base64.b64decode(k, validate=True) if b"b" in tokens else k

        def read(conn):
            records = []
            while True:
                line = conn.line()
                tok = line.split(b" ")
                if tok[0] == b"VA" and len(tok) >= 2:
                    key = key_of(tok[2:])
                    records.append((key, conn.block(int(tok[1]))))
                    if upper is not None and key >= upper:
                        # A key another placement stored here: the split keys
                        # differ from the ones the data was written with.
                        raise ConnectionError(f"key {key!r} is beyond this shard's range (from {upper!r} on)")
                elif tok[0] == b"EN":
                    return records, None
                elif tok[0] == b"CN":
                    return records, key_of(tok[1:])
                else:
                    self._fail(conn, line)

        return self._call(i, request + b"\r\n", read)

    def range(self, lo=None, hi=None, limit=None):
        """Yields (key, value) for lo <= key <= hi in key order across the
        shards (lo None: from the first key; hi None: to the last), at most
        `limit` records. Each shard is read in `mr` requests of `batch`
        records, continuing at the `CN` key; a request's records are read
        in full before the first is yielded, so the client may be used
        for other calls while the iteration is paused."""
        lo = _FIRST_KEY if lo is None or lo == b"" or lo == "" else _as_bytes(lo)
        hi = None if hi is None else _as_bytes(hi)
        if limit is not None and limit <= 0 or hi is not None and lo > hi:
            return
        left = limit
        for i in range(self.shard_of(lo), len(self.addresses)):
            if i > 0 and hi is not None and self.splits[i - 1] > hi:
                return
            start = lo if i == 0 or lo > self.splits[i - 1] else self.splits[i - 1]
            while start is not None:
                count = self.batch if left is None else min(self.batch, left)
                records, start = self._mr(i, start, hi, count)
                yield from records
                if left is not None:
                    left -= len(records)
                    if left <= 0:
                        return
