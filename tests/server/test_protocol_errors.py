"""Bad input over real sockets: each gets memcached's error reply and nothing else breaks."""
import random
import socket
import time

from pymemcache.client.base import Client

from conftest import exchange, recv_until


def roundtrip(server, payload, marker=b"\r\n"):
    s = server.connect()
    try:
        return exchange(s, payload, marker)
    finally:
        s.close()


def test_malformed_lines(server):
    assert roundtrip(server, b"\r\n") == b"ERROR\r\n"
    assert roundtrip(server, b"bogus command\r\n") == b"ERROR\r\n"
    assert roundtrip(server, b"get\r\n") == b"ERROR\r\n"
    assert roundtrip(server, b"set k 0 0\r\n") == b"ERROR\r\n"
    assert roundtrip(server, b"set k 0 0 -1\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert roundtrip(server, b"set k 0 0 abc\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert roundtrip(server, b"set k x 0 1\r\nz\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert roundtrip(server, b"set k 4294967296 0 1\r\nz\r\nget k\r\n", b"END\r\n") == \
        b"CLIENT_ERROR bad command line format\r\nEND\r\n"
    assert roundtrip(server, b"incr k abc\r\n") == b"CLIENT_ERROR invalid numeric delta argument\r\n"
    assert roundtrip(server, b"touch k x\r\n") == b"CLIENT_ERROR invalid exptime argument\r\n"
    assert roundtrip(server, b"delete k 5\r\n").startswith(b"CLIENT_ERROR bad command line format")
    assert roundtrip(server, b"flush_all x\r\n") == b"CLIENT_ERROR bad command line format\r\n"


def test_bad_keys(server):
    long_key = b"k" * 251
    # the data block of a refused set is skipped: the next command is read normally
    assert roundtrip(server, b"set " + long_key + b" 0 0 1\r\nx\r\nget " + long_key[:250] + b"\r\n", b"END\r\n") == \
        b"CLIENT_ERROR bad command line format\r\nEND\r\n"
    assert roundtrip(server, b"get " + long_key + b"\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert roundtrip(server, b"set a\x01b 0 0 1\r\nx\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert roundtrip(server, b"get a\x7fb\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert roundtrip(server, b"set " + b"k" * 250 + b" 0 0 1\r\nx\r\n") == b"STORED\r\n"


def test_data_block_length_mismatch(server):
    # longer than announced: bad data chunk, the rest of that line skipped
    assert roundtrip(server, b"set k 0 0 3\r\nabcdef\r\nget k\r\n", b"END\r\n") == \
        b"CLIENT_ERROR bad data chunk\r\nEND\r\n"
    # shorter than announced: the next line's bytes complete the block, which is then bad
    assert roundtrip(server, b"set k 0 0 8\r\nab\r\nget k\r\nget k\r\n", b"END\r\n") == \
        b"CLIENT_ERROR bad data chunk\r\nEND\r\n"
    assert roundtrip(server, b"set k 0 0 2\r\nab\r\nget k\r\n", b"END\r\n") == b"STORED\r\nVALUE k 0 2\r\nab\r\nEND\r\n"


def test_value_over_limit_is_skipped(server):
    s = server.connect()
    n = 2 << 20
    s.sendall(b"set big 0 0 %d\r\n" % n)
    assert recv_until(s, b"\r\n") == b"SERVER_ERROR object too large for cache\r\n"
    s.sendall(b"x" * n + b"\r\nget big\r\nset ok 0 0 1\r\n1\r\n")
    assert recv_until(s, b"STORED\r\n") == b"END\r\nSTORED\r\n"


def test_line_too_long_closes(server):
    s = server.connect()
    s.sendall(b"get " + b"k" * (70 * 1024))
    assert recv_until(s, b"\r\n") == b"CLIENT_ERROR line too long\r\n"
    assert s.recv(10) == b""


def test_disconnect_mid_value(server):
    for cut in (0, 1, 5, 99, 100, 101):
        s = server.connect()
        s.sendall(b"set half 0 0 100\r\n" + b"x" * cut)
        s.close()
    s = server.connect()
    s.sendall(b"set mid 0 0 1000000\r\n" + b"y" * 500000)
    s.shutdown(socket.SHUT_RDWR)
    s.close()
    assert roundtrip(server, b"get half mid\r\n", b"END\r\n") == b"END\r\n"
    assert roundtrip(server, b"set alive 0 0 1\r\n1\r\n") == b"STORED\r\n"


def test_noreply_errors_are_silent(server):
    # memcached drops every reply of a noreply command, errors included
    assert roundtrip(server, b"set k 0 0 1 noreply\r\nxyz\r\nget k\r\n", b"END\r\n") == b"END\r\n"
    assert roundtrip(server, b"incr nope 1 noreply\r\nversion\r\n").startswith(b"VERSION ")


def fuzz_payload(rng):
    """A random mix of commands, mangled commands and random bytes."""
    cmds = [b"get fz%d" % rng.randrange(20), b"gets fz%d fz%d" % (rng.randrange(20), rng.randrange(20)),
            b"set fz%d %d %d %d" % (rng.randrange(20), rng.randrange(5), rng.randrange(-2, 3), rng.randrange(0, 40)),
            b"cas fz%d 0 0 %d %d" % (rng.randrange(20), rng.randrange(0, 40), rng.randrange(10)),
            b"append fz%d 0 0 %d" % (rng.randrange(20), rng.randrange(0, 40)),
            b"incr fz%d %d" % (rng.randrange(20), rng.randrange(100)), b"delete fz%d" % rng.randrange(20),
            b"touch fz%d %d" % (rng.randrange(20), rng.randrange(100)), b"stats", b"version", b"verbosity 1",
            b"decr fz%d 18446744073709551616" % rng.randrange(20), b"set fz 0 0 99999999999999999999"]
    out = b""
    for _ in range(rng.randrange(1, 30)):
        c = bytearray(rng.choice(cmds))
        r = rng.random()
        if r < 0.2 and c:  # flip bytes (never into 'q': quit would end the test early)
            for _ in range(rng.randrange(1, 4)):
                c[rng.randrange(len(c))] = rng.choice(b" \r\n\x00\x01xyz0123456789-")
        elif r < 0.3:
            c = bytearray(rng.randbytes(rng.randrange(0, 60)).replace(b"q", b"Q"))
        out += bytes(c) + rng.choice([b"\r\n", b"\n", b"\r\n", b""])
        if rng.random() < 0.5:
            out += rng.randbytes(rng.randrange(0, 40)).replace(b"q", b"Q") + b"\r\n"
    return out


REPLY_PREFIXES = (b"VALUE ", b"END", b"STORED", b"NOT_STORED", b"EXISTS", b"NOT_FOUND", b"DELETED", b"TOUCHED",
                  b"OK", b"ERROR", b"CLIENT_ERROR ", b"SERVER_ERROR ", b"STAT ", b"VERSION ", b"RESET",
                  b"VA ", b"HD", b"EN", b"NS", b"EX", b"NF", b"MN", b"ME ", b"CN ", b"ITEM ", b"key=")


def check_replies(got, round_, data):
    """Replies are whole lines of the protocol's grammar; a VALUE (or meta VA)
    line is followed by exactly its announced bytes and \\r\\n. A command
    starting with the binary magic byte gets one binary error reply, the last
    thing sent."""
    pos = 0
    while True:
        if got[pos:pos + 1] == b"\x81":
            body = int.from_bytes(got[pos + 8:pos + 12], "big")
            assert got[pos + 6:pos + 8] == b"\x00\x81" and len(got) == pos + 24 + body, (round_, got[pos:], data)
            return
        nl = got.find(b"\r\n", pos)
        if nl < 0:
            assert pos == len(got), (round_, got[pos:], data)  # no partial reply
            return
        line = got[pos:nl]
        assert line.startswith(REPLY_PREFIXES) or line.isdigit(), (round_, line, data)
        pos = nl + 2
        if line.startswith((b"VALUE ", b"VA ")):
            n = int(line.split()[3 if line.startswith(b"VALUE ") else 1])
            assert got[pos + n:pos + n + 2] == b"\r\n", (round_, line, data)
            pos += n + 2


def test_fuzz(server):
    """Random and mangled commands, in pieces, some connections dropped midway:
    the server answers only well-formed replies and keeps serving."""
    rng = random.Random(18)
    print("seed 18")
    for round_ in range(200):
        s = server.connect(timeout=5)
        data = fuzz_payload(rng)
        pos = 0
        while pos < len(data):
            step = rng.randrange(1, 64)
            s.sendall(data[pos:pos + step])
            pos += step
        if rng.random() < 0.3:
            s.close()  # drop: maybe mid-command, mid-value, replies unread
            continue
        s.shutdown(socket.SHUT_WR)  # the server answers what it got, then closes
        s.settimeout(60)
        got = recv_until(s, b"\0never")
        s.close()
        check_replies(got, round_, data)
    # the server is still well and consistent
    c = Client(("127.0.0.1", server.port), default_noreply=False)
    assert c.set("after-fuzz", b"ok")
    assert c.get("after-fuzz") == b"ok"
    assert c.version()


def test_connection_limit(server_factory):
    srv = server_factory(args=["--max-connections", "2", "--threads", "1"]).start()
    a, b = srv.connect(), srv.connect()
    assert exchange(a, b"version\r\n").startswith(b"VERSION")
    assert exchange(b, b"version\r\n").startswith(b"VERSION")
    c = srv.connect()
    assert recv_until(c, b"\r\n") == b"SERVER_ERROR too many open connections\r\n"
    assert c.recv(10) == b""
    a.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the server sees the close a moment later
        d = srv.connect()
        if exchange(d, b"version\r\n").startswith(b"VERSION"):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("a freed slot was not reused")
    assert srv.stop() == 0


def test_idle_timeout(server_factory):
    srv = server_factory(args=["--idle-timeout", "1"]).start()
    s = srv.connect()
    assert exchange(s, b"version\r\n").startswith(b"VERSION")
    s.settimeout(30)
    assert s.recv(10) == b""  # closed by the server after a second idle
    assert srv.stop() == 0


def test_full_pool(server_factory):
    srv = server_factory(pool_size="16M").start()
    c = Client(("127.0.0.1", srv.port), default_noreply=False, timeout=30)
    value = b"v" * 100000
    stored = []
    full = False
    for i in range(1000):
        try:
            c.set(f"fill{i}", value)
            stored.append(i)
        except Exception as e:  # noqa: BLE001 - pymemcache raises MemcacheServerError
            assert "out of memory" in str(e)
            full = True
            break
    assert full and stored
    # nothing stored was lost, the server still serves, and a delete makes room
    for i in stored:
        assert c.get(f"fill{i}") == value
    # deletes make room again (freed blocks return through epochs and per-thread caches, so a few)
    for n, i in enumerate(stored):
        assert c.delete(f"fill{i}")
        try:
            assert c.set("small", b"1")
            break
        except Exception as e:  # noqa: BLE001
            assert "out of memory" in str(e) and n < 50
    assert c.get("small") == b"1"
    assert srv.stop() == 0
