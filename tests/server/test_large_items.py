"""Items over 1 MiB: memcached's -I (`--max-item-size`), its limits, and a
full pool of large items. -I counts the 16-byte item header, as memcached
counts its own: `-I 4m` takes values of up to 4 MiB - 16 bytes."""
import os
import subprocess

import pytest
from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheServerError

from conftest import BIN, INDEX, exchange

MiB = 1 << 20
HEADER = 16


def client(server):
    return Client(("127.0.0.1", server.port), default_noreply=False, timeout=60, connect_timeout=10)


def stat(server, which, name):
    s = server.connect(timeout=60)
    reply = exchange(s, b"stats" + (b" " + which if which else b"") + b"\r\n", b"END\r\n")
    s.close()
    for line in reply.split(b"\r\n"):
        if line.startswith(b"STAT " + name + b" "):
            return int(line.split()[2])
    raise AssertionError(f"no {name} in {reply[:200]!r}")


def value(n, seed=0):
    block = bytes((i * 131 + seed) & 0xFF for i in range(4096))
    return (block * (n // 4096 + 1))[:n]


def test_default_item_size_is_memcacheds(server_factory):
    s = server_factory().start()
    assert stat(s, b"settings", b"item_size_max") == MiB
    assert stat(s, b"", b"item_size_max") == MiB
    c = client(s)
    c.set("fits", value(MiB - HEADER))
    assert c.get("fits") == value(MiB - HEADER)
    with pytest.raises(MemcacheServerError, match="too large"):
        c.set("over", value(MiB - HEADER + 1))
    assert c.get("over") is None and c.get("fits") == value(MiB - HEADER)
    assert s.stop() == 0


@pytest.mark.parametrize("flag", [["-I", "4m"], ["-I4m"], ["--max-item-size", "4M"]])
def test_item_size_option_raises_the_limit(server_factory, flag):
    s = server_factory(args=flag).start()
    assert stat(s, b"settings", b"item_size_max") == 4 * MiB
    assert stat(s, b"", b"item_size_max") == 4 * MiB
    c = client(s)
    c.set("three", value(3 * MiB), flags=7)
    assert c.get("three") == value(3 * MiB)
    c.set("edge", value(4 * MiB - HEADER, 1))
    with pytest.raises(MemcacheServerError, match="object too large for cache"):
        c.set("over", value(4 * MiB - HEADER + 1))
    # The refused block was skipped unbuffered; the connection goes on.
    assert c.get_many(["three", "edge", "over"]) == {"three": value(3 * MiB), "edge": value(4 * MiB - HEADER, 1)}
    c.append("three", b"tail")
    assert c.get("three") == value(3 * MiB) + b"tail"
    with pytest.raises(MemcacheServerError, match="too large"):
        c.append("edge", b"x")  # an append making the item too large
    assert s.stop() == 0


@pytest.mark.parametrize("size,message", [
    ("256m", "is over what"),  # above the index's max_value (128 MiB)
    ("2g", "must be in"),      # above memcached's range (1 GiB)
    ("512", "must be in"),     # below it (1 KiB)
    ("4x", "unknown suffix"),
])
def test_item_size_outside_the_limits_is_a_usage_error(pool_path, size, message):
    pool = pool_path()
    r = subprocess.run([BIN, "serve", "--index", INDEX, "--pool", pool, "-I", size, "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not os.path.exists(pool)  # refused before the pool was created


# The largest item an index takes: -I at its max_value (128 MiB), one value
# of max_value - 16 bytes, through pymemcache.
def test_largest_item(server_factory):
    limit = 128 * MiB
    s = server_factory(args=["-I", "128m"], pool_size="640M").start()
    assert stat(s, b"settings", b"item_size_max") == limit
    c = client(s)
    big = value(limit - HEADER, 3)
    c.set("largest", big)
    assert c.get("largest") == big
    with pytest.raises(MemcacheServerError, match="too large"):
        c.set("over", big + b"!")
    c.set("largest", b"small again")
    assert c.get("largest") == b"small again"
    assert s.stop() == 0


# A pool filled with large items: each set that does not fit gets SERVER_ERROR
# out of memory and loses nothing; a delete or an overwrite makes room for
# the next set at once: the replaced item's block is reclaimed then, not left
# waiting for its grace period (before, the second overwrite below failed).
def test_full_pool_of_large_items(server_factory):
    s = server_factory(args=["-I", "16m", "--threads", "1"], pool_size="64M").start()
    c = client(s)
    item = 8 * MiB - 4096  # with key and headers: 128 chunks of 64 KiB
    stored = []
    for i in range(20):
        try:
            c.set(f"big{i}", value(item, i))
        except MemcacheServerError as e:
            assert "out of memory" in str(e)
            break
        stored.append(i)
    else:
        pytest.fail("a 64 MiB pool took 20 items of 8 MiB")
    assert 3 <= len(stored) < 8
    with pytest.raises(MemcacheServerError, match="out of memory"):
        c.set("one-more", value(item, 99))
    for i in stored:
        assert c.get(f"big{i}") == value(item, i)
    # Room for one more copy of an item, not two: each overwrite needs the
    # block the one before replaced.
    assert c.delete(f"big{stored[-1]}")
    for round in range(10):
        c.set(f"big{stored[0]}", value(item, 100 + round))
    assert c.get(f"big{stored[0]}") == value(item, 109)
    c.set("one-more", value(item, 99))
    assert c.get("one-more") == value(item, 99)
    for i in stored[1:-1]:
        assert c.get(f"big{i}") == value(item, i)
    assert s.stop() == 0
