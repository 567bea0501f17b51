"""Range-partitioned shards through pmindex.shards: three servers, split keys,
binary keys written through the client; ordered ranges across the shards
against the sorted union, limits and continuations across a shard boundary,
each key on the shard that owns it, and a stopped shard is an error."""
import base64
import importlib.util
import os
import random

import pytest

from conftest import exchange

# Loaded by path: the module is pure Python and must work without the
# compiled pmindex module (which the package's __init__ imports).
_spec = importlib.util.spec_from_file_location(
    "pmindex_shards", os.path.join(os.path.dirname(__file__), "../../python/pmindex/shards.py"))
shards = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shards)

SPLITS = [b"\x40", b"\x90\x00"]
SERVER_ARGS = ["--threads", "1"]


def random_items(rng, n):
    items = {}
    while len(items) < n:
        k = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 17)))  # no leading NUL
        items[k] = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
    for k in SPLITS + [b"\x3f\xff", b"\x90", b"\x90\x00\x00", b"\x01", b"\xff" * 16, b"key with space\r\n"]:
        items[k] = b"edge:" + k
    return items


@pytest.fixture
def cluster(server_factory):
    servers = [server_factory(args=SERVER_ARGS, pool_size="64M").start() for _ in range(3)]
    addresses = [f"127.0.0.1:{s.port}" for s in servers]
    yield servers, addresses
    for s in servers:
        if s.proc.poll() is None:
            assert s.stop() == 0, s.read_log()


def client(addresses, **kw):
    return shards.ShardedClient.from_splits(SPLITS, addresses, **kw)


def expected(items, lo=None, hi=None, limit=None):
    out = [(k, items[k]) for k in sorted(items) if (lo is None or k >= lo) and (hi is None or k <= hi)]
    return out if limit is None else out[:limit]


def test_ranges_across_shards(cluster):
    servers, addresses = cluster
    rng = random.Random(int(os.environ.get("PMINDEX_SEED", "7")))
    items = random_items(rng, 3000)
    with client(addresses) as db:
        for k, v in items.items():
            db.set(k, v)
        assert list(db.range()) == expected(items)
        keys = sorted(items)
        # Bounds on keys and between keys, inside one shard and across them.
        probes = [None, b"\x01", b"\x3f", b"\x40", b"\x40\x00", b"\x8f\xff", b"\x90", b"\x90\x00", b"\xa0", b"\xff" * 17]
        probes += rng.sample(keys, 20) + [k + b"\x00" for k in rng.sample(keys, 10)]
        for lo in probes:
            for hi in probes:
                assert list(db.range(lo, hi)) == expected(items, lo, hi), (lo, hi)
        # Empty ranges: lo > hi, a gap between adjacent keys, beyond the last key.
        assert list(db.range(b"\x90", b"\x40")) == []
        gap = next(k for k in keys if k + b"\x00" not in items and k >= b"\x40")
        assert list(db.range(gap + b"\x00", gap + b"\x00")) == []
        assert list(db.range(b"\xff" * 17)) == []
        # Limits, ending inside a shard and exactly at a shard's end.
        for lo, limit in [(None, 1), (None, 10), (b"\x30", 500), (b"\x90", 0), (None, len(items) + 5)]:
            assert list(db.range(lo, limit=limit)) == expected(items, lo, limit=limit), (lo, limit)
        first_of_1 = keys.index(next(k for k in keys if k >= SPLITS[0]))
        assert list(db.range(limit=first_of_1)) == expected(items, limit=first_of_1)
        assert list(db.range(limit=first_of_1))[-1][0] < SPLITS[0]
        assert db.get(b"\x01missing") is None and db.get(b"\x91absent") is None
        for bad in (b"", b"\x00key"):  # what the server refuses is refused before sending
            with pytest.raises(ValueError):
                db.set(bad, b"x")
        for k in rng.sample(keys, 50):
            assert db.get(k) == items[k]
        for k in rng.sample([k for k in keys if k not in SPLITS], 300):
            assert db.delete(k)
            del items[k]
        assert not db.delete(b"\x91absent")
        assert list(db.range()) == expected(items)

    # Each key is on the shard that owns it, and only there: ask each server alone.
    owner = client(addresses)
    for i, address in enumerate(addresses):
        with shards.ShardedClient([(None, address)]) as alone:
            got = dict(alone.range())
        assert got == {k: v for k, v in items.items() if owner.shard_of(k) == i}
        assert got, f"shard {i} is empty: the split keys do not spread this load"
    with servers[1].connect() as s:  # and through plain memcached text: a split key is shard 1's
        reply = exchange(s, b"mg " + base64.b64encode(SPLITS[0]) + b" b v\r\nmn\r\n", b"MN\r\n")
        assert reply == b"VA %d\r\n%s\r\nMN\r\n" % (len(items[SPLITS[0]]), items[SPLITS[0]])
    with servers[0].connect() as s:
        assert exchange(s, b"mg " + base64.b64encode(SPLITS[0]) + b" b v\r\nmn\r\n", b"MN\r\n") == b"EN\r\nMN\r\n"


class CountingClient(shards.ShardedClient):
    """Counts the mr requests, per shard, and whether each ended with CN."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.requests = []

    def _mr(self, i, start, hi, count):
        records, nxt = super()._mr(i, start, hi, count)
        self.requests.append((i, start, len(records), nxt))
        return records, nxt


def test_continuation_across_a_shard_boundary(cluster):
    _, addresses = cluster
    items = {bytes([0x30, j]): b"a%d" % j for j in range(1, 8)}  # shard 0
    items.update({bytes([0x50, j]): b"b%d" % j for j in range(1, 6)})  # shard 1
    items.update({bytes([0xa0, j]): b"c%d" % j for j in range(1, 4)})  # shard 2
    shard_list = [(None, addresses[0]), (SPLITS[0], addresses[1]), (SPLITS[1], addresses[2])]
    with CountingClient(shard_list, batch=3) as db:
        for k, v in items.items():
            db.set(k, v)
        assert list(db.range()) == expected(items)
        # 7 = 3+3+1 on shard 0, 5 = 3+2 on shard 1, 3 = 3 on shard 2.
        assert [(i, n) for i, _, n, _ in db.requests] == [(0, 3), (0, 3), (0, 1), (1, 3), (1, 2), (2, 3)]
        assert db.requests[1][1] == db.requests[0][3] == bytes([0x30, 4])  # resumed at the CN key
        assert db.requests[3][1] == SPLITS[0]  # the next shard starts at its split key
        db.requests.clear()
        lo, hi = bytes([0x30, 6]), bytes([0x50, 4])
        assert list(db.range(lo, hi, limit=4)) == expected(items, lo, hi, 4)
        assert list(db.range(lo, hi)) == expected(items, lo, hi)
        assert [i for i, *_ in db.requests] == [0, 1, 0, 1, 1]  # never shard 2: beyond hi
        # Pausing a range for other calls on the same shard keeps both right.
        it = db.range()
        head = [next(it) for _ in range(2)]
        assert db.get(bytes([0x30, 7])) == b"a7"
        assert head + list(it) == expected(items)


def test_a_stopped_shard_is_an_error(cluster):
    servers, addresses = cluster
    items = {bytes([b, j]): b"%d" % j for b in (0x20, 0x60, 0xc0) for j in range(1, 50)}
    db = client(addresses, batch=10)
    for k, v in items.items():
        db.set(k, v)
    assert list(db.range()) == expected(items)
    assert servers[1].stop() == 0
    with pytest.raises(shards.ShardError) as e:
        list(db.range())
    assert e.value.address == addresses[1]
    got = []
    with pytest.raises(shards.ShardError):
        for record in db.range():
            got.append(record)
    assert got == expected(items, hi=b"\x3f")  # shard 0's records came, then the error
    with pytest.raises(shards.ShardError):
        db.get(bytes([0x60, 1]))
    with pytest.raises(shards.ShardError):
        db.set(b"\x70", b"x")
    # Ranges that do not touch the stopped shard still work.
    assert list(db.range(hi=b"\x3f")) == expected(items, hi=b"\x3f")
    assert list(db.range(b"\xa0")) == expected(items, b"\xa0")
    db.close()


def test_a_key_on_the_wrong_shard_is_an_error(cluster):
    _, addresses = cluster
    db = client(addresses)
    db.set(b"\x20", b"mine")
    shards.ShardedClient([(None, addresses[0])]).set(b"\x50", b"shard 1's")  # another placement
    with pytest.raises(shards.ShardError, match="beyond this shard's range"):
        list(db.range())
    assert list(db.range(b"\x40")) == []  # shard 1 and 2 themselves are consistent
    db.close()


def test_bad_shard_lists():
    with pytest.raises(ValueError):
        shards.ShardedClient([])
    with pytest.raises(ValueError):
        shards.ShardedClient([(b"a", "127.0.0.1:1")])
    with pytest.raises(ValueError):
        shards.ShardedClient([(None, "127.0.0.1:1"), (b"b", "127.0.0.1:2"), (b"b", "127.0.0.1:3")])
    with pytest.raises(ValueError):
        shards.ShardedClient([(None, "127.0.0.1:1"), (None, "127.0.0.1:2")])
    with pytest.raises(ValueError):
        shards.ShardedClient([(None, "localhost")])
    with pytest.raises(ValueError):
        shards.ShardedClient.from_splits([b"a", b"b"], ["127.0.0.1:1", "127.0.0.1:2"])
