"""`pmindex serve` as a program: which indexes it serves and with which -I,
bad --listen values, what stats says of the pool, the binary protocol, the
warning for refused control-character keys, per-verb --help, and
docs/server.md against `pmindex list`."""
import json
import os
import re
import socket
import struct
import subprocess
import time

import pytest

from conftest import BIN, recv_until

DOCS = os.path.join(os.path.dirname(__file__), "../../docs/server.md")


def registry():
    r = subprocess.run([BIN, "list", "--detail", "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    return data["indexes"] if isinstance(data, dict) else data


def servable():
    """Indexes that take any byte key (not arraylist, whose keys are slot numbers)."""
    return [e for e in registry() if "bytes" in e["key_kinds"] and not e["key_limit"]]


def stats(sock):
    sock.sendall(b"stats\r\n")
    return dict(l.split(" ", 2)[1:] for l in recv_until(sock, b"END\r\n").decode().splitlines() if l.startswith("STAT"))


@pytest.mark.parametrize("index", [e["name"] for e in servable()])
def test_every_servable_index_serves_by_default(server_factory, index):
    """The default -I is min(1m, the index's max_value): every index that
    takes byte keys starts without options, stores, reads and lists."""
    entry = next(e for e in servable() if e["name"] == index)
    srv = server_factory(index=index, pool_size="64M").start()
    s = srv.connect()
    st = stats(s)
    assert int(st["item_size_max"]) == min(1 << 20, entry["max_value"])
    s.sendall(b"set k 0 0 5\r\nhello\r\nget k\r\n")
    kept = index != "null"  # the null baseline keeps nothing
    assert recv_until(s, b"END\r\n") == b"STORED\r\n" + (b"VALUE k 0 5\r\nhello\r\n" if kept else b"") + b"END\r\n"
    s.sendall(b"mr k v\r\n")
    want = (b"VA 5 kk\r\nhello\r\n" if kept else b"") + b"EN\r\n" if entry["ordered"] else \
        b"SERVER_ERROR mr needs an ordered index; %s is not\r\n" % index.encode()
    assert recv_until(s, b"\r\n" if not entry["ordered"] else b"EN\r\n") == want
    assert srv.stop() == 0


def test_item_size_follows_the_index(server_factory, pool_path):
    """btree stores values of up to 208 bytes: -I 208 is its largest (not
    refused as under memcached's 1k minimum), -I 209 is over it."""
    srv = server_factory(index="btree", args=["-I", "208"]).start()
    s = srv.connect()
    assert int(stats(s)["item_size_max"]) == 208
    s.sendall(b"set k 0 0 48\r\n" + b"x" * 48 + b"\r\nset k 0 0 193\r\n" + b"x" * 193 + b"\r\n")
    assert recv_until(s, b"cache\r\n") == b"STORED\r\nSERVER_ERROR object too large for cache\r\n"
    assert srv.stop() == 0
    pool = pool_path()
    r = subprocess.run([BIN, "serve", "--index", "btree", "--pool", pool, "-I", "209"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "over what btree stores" in r.stderr and not os.path.exists(pool), r.stderr
    r = subprocess.run([BIN, "serve", "--index", "fptree", "--pool", pool, "-I", "512"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "must be in [1024, " in r.stderr and not os.path.exists(pool), r.stderr


@pytest.mark.parametrize("listen", ["127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:http", "127.0.0.1",
                                    "999.1.1.1:11211", "no.such.host.invalid:11211", "[::1"])
def test_bad_listen_is_a_usage_error(pool_path, listen):
    pool = pool_path()
    r = subprocess.run([BIN, "serve", "--index", "fptree", "--pool", pool, "--listen", listen],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and listen in r.stderr, r.stderr
    assert not os.path.exists(pool)  # refused before the pool is created


def test_pool_was_clean(server_factory):
    srv = server_factory().start()
    st = stats(srv.connect())
    assert st["pool_was_clean"] == "1" and st["pool_created"] == "1"  # a new pool needed no recovery
    srv.connect().sendall(b"set k 0 0 1\r\n1\r\n")
    assert srv.stop() == 0
    srv.start()
    st = stats(srv.connect())
    assert st["pool_was_clean"] == "1" and st["pool_created"] == "0"
    s = srv.connect()
    s.sendall(b"set j 0 0 1\r\n1\r\n")
    assert recv_until(s, b"\r\n") == b"STORED\r\n"
    srv.kill()
    srv.start()
    st = stats(srv.connect())
    assert st["pool_was_clean"] == "0" and st["pool_created"] == "0"  # recovered after a crash
    assert srv.stop() == 0


def test_binary_protocol_gets_an_error_and_a_close(server):
    s = server.connect()
    s.settimeout(5)  # the old server never answered
    header = struct.pack(">BBHBBHIIQ", 0x80, 0x0b, 0, 0, 0, 0, 0, 0xdeadbeef, 0)  # a binary "version"
    s.sendall(header)
    reply = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    magic, opcode, _, _, _, status, body, opaque, _ = struct.unpack(">BBHBBHIIQ", reply[:24])
    assert (magic, opcode, status, opaque) == (0x81, 0x0b, 0x81, 0xdeadbeef)
    assert reply[24:] == b"binary protocol not supported: use the text or meta protocol" and body == len(reply) - 24
    assert "binary-protocol request" in server.read_log()
    t = server.connect()  # other clients are not affected
    t.sendall(b"version\r\n")
    assert recv_until(t, b"\r\n").startswith(b"VERSION")


def test_refused_control_keys_are_noted(server_factory):
    srv = server_factory().start()
    for _ in range(3):
        s = srv.connect()
        s.sendall(b"get \x10\x10abc\r\nset \x10k 0 0 1\r\nx\r\n")
        assert recv_until(s, b"format\r\nCLIENT_ERROR bad command line format\r\n")
        s.close()
    assert srv.stop() == 0
    notes = [l for l in srv.read_log().splitlines() if "control characters" in l]
    assert 1 <= len(notes) <= 3, notes  # once per connection, at most once a second
    assert "--allow-control-keys" in notes[0]


def verbs():
    r = subprocess.run([BIN, "help"], capture_output=True, text=True, timeout=30)
    return re.findall(r"^  ([a-z][a-z-]*) ", r.stdout.split("verbs:")[1].split("\n\n")[0], re.M)


@pytest.mark.parametrize("verb", verbs())
def test_verb_help(verb):
    r = subprocess.run([BIN, verb, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: pmindex {verb} "), r.stdout
    assert "options:" in r.stdout


def test_serve_help_lists_its_options():
    r = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for opt in ("--listen", "--threads", "--max-item-size", "--allow-control-keys", "--index", "--pool"):
        assert opt in r.stdout, r.stdout


def test_docs_list_every_servable_index():
    """docs/server.md names the indexes `pmindex serve` serves, as `pmindex
    list` says (those that take any byte key), and which of them answer mr."""
    with open(DOCS) as f:
        text = f.read()
    m = re.search(r"<!-- servable: (.*?) -->", text)
    assert m, "docs/server.md lost its servable-index list"
    documented = [n.strip() for n in m.group(1).split(",")]
    assert sorted(documented) == sorted(e["name"] for e in servable())
    for e in servable():
        row = re.search(r"^\| `%s` \|([^\n]*)" % re.escape(e["name"]), text, re.M)
        assert row, f"no row for {e['name']} in the range-read table"
        assert ("no (unordered)" in row.group(1)) == (not e["ordered"]), row.group(0)


def test_slot_number_index_is_refused(pool_path):
    pool = pool_path()
    r = subprocess.run([BIN, "serve", "--index", "arraylist", "--pool", pool], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "below its capacity" in r.stderr and not os.path.exists(pool), r.stderr
