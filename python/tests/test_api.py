# The Index API against a dict oracle, on every registered index, with int
# keys (keys=u64) and byte keys (keys=bytes); reopening and recovery.
import random

import pytest

import pmindex
from conftest import all_indexes, key_limit, mode_of, persistent_indexes, small_params


def test_indexes_lists_the_registry():
    infos = pmindex.indexes()
    names = [i["name"] for i in infos]
    assert "permart" in names and "canary" in names
    for i in infos:
        assert i["modes"] and i["key_kinds"] and i["max_key"] >= 8 and i["max_value"] >= 8


def ordered(name):
    return next(i for i in pmindex.indexes() if i["name"] == name)["ordered"]


def check_unordered(db, oracle):
    # No scan (pmindex.Unsupported): every key looked up, and the count.
    for k, v in oracle.items():
        assert db.get(k) == v
    assert len(db) == len(oracle) and db.stats()["records"] == len(oracle)
    assert db.check() is True
    with pytest.raises(pmindex.Unsupported):
        list(db.items())
    with pytest.raises(pmindex.Unsupported):
        list(db.range(next(iter(oracle), 0), next(iter(oracle), 0)))


def check_against(db, oracle):
    if not ordered(db.name):
        return check_unordered(db, oracle)
    want = sorted(oracle.items())
    assert list(db.items()) == want
    assert list(db) == [k for k, _ in want]
    assert list(db.keys()) == [k for k, _ in want]
    assert list(db.values()) == [v for _, v in want]
    assert len(db) == len(want)
    assert db.stats()["records"] == len(want)
    assert db.check() is True


@pytest.mark.parametrize("name", all_indexes())
def test_u64_mapping_matches_dict(name, pool_path):
    rng = random.Random(7)
    oracle = {}
    limit = key_limit(name)  # an array's slot numbers: keys below it
    with pmindex.open(pool_path, name, mode=mode_of(name), size="32M", params=small_params(name)) as db:
        assert db.key_kind == "u64" and db.name == name and not db.closed
        for _ in range(600):
            k = rng.randrange(300) if limit else rng.randrange(300) * 0x9E3779B97F4A7C15 % (1 << 64)
            v = rng.randrange(1 << 64)
            op = rng.randrange(6)
            if op == 0:
                assert db.insert(k, v) == (k not in oracle)
                oracle.setdefault(k, v)
            elif op == 1:
                assert db.update_existing(k, v) == (k in oracle)
                if k in oracle:
                    oracle[k] = v
            elif op == 2:
                assert db.upsert(k, v) == (k not in oracle)
                oracle[k] = v
            elif op == 3:
                assert db.remove(k) == (k in oracle)
                oracle.pop(k, None)
            elif op == 4:
                db[k] = v
                oracle[k] = v
            else:
                assert (k in db) == (k in oracle)
                assert db.get(k) == oracle.get(k)
                assert db.get(k, "absent") == oracle.get(k, "absent")
        check_against(db, oracle)
        keys = sorted(oracle)
        if not ordered(name):
            return
        lo, hi = keys[len(keys) // 4], keys[3 * len(keys) // 4]
        assert list(db.range(lo, hi)) == [(k, oracle[k]) for k in keys if lo <= k <= hi]
        assert list(db.range(hi, lo)) == []
        assert list(db.scan(lo, 10)) == [(k, oracle[k]) for k in keys if k >= lo][:10]
        assert list(db.scan(lo, 0)) == []
        assert list(db.items(start=hi)) == [(k, oracle[k]) for k in keys if k >= hi]
        # 8-byte keys work on a keys=u64 index too (big-endian, as index.hpp)
        assert db.get(keys[0].to_bytes(8, "big")) == oracle[keys[0]]
        assert list(db.scan(lo.to_bytes(8, "big"), 3)) == [(k, oracle[k]) for k in keys if k >= lo][:3]
        with pytest.raises(KeyError):
            db[keys[-1] + 1 if keys[-1] < (limit or 1 << 64) - 1 else 0]
        del db[keys[0]]
        del oracle[keys[0]]
        with pytest.raises(KeyError):
            del db[keys[0]]
        check_against(db, oracle)
    assert db.closed


@pytest.mark.parametrize("name", all_indexes())
def test_bytes_mapping_matches_dict(name, pool_path):
    rng = random.Random(11)
    oracle = {}
    alphabet = b"ab\x00\xff"
    if key_limit(name):
        pytest.skip("takes integer keys below its key limit (byte keys: their 8 bytes only)")
    with pmindex.open(pool_path, name, mode=mode_of(name), size="32M", keys="bytes") as db:
        assert db.key_kind == "bytes"
        for _ in range(600):
            k = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 6)))
            v = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
            op = rng.randrange(4)
            if op == 0:
                assert db.insert(k, v) == (k not in oracle)
                oracle.setdefault(k, v)
            elif op == 1:
                db[k] = v
                oracle[k] = v
            elif op == 2:
                assert db.remove(k) == (k in oracle)
                oracle.pop(k, None)
            else:
                assert db.get(k) == oracle.get(k)
        check_against(db, oracle)
        keys = sorted(oracle)
        if not ordered(name):
            return
        assert list(db.range(b"a", b"b")) == [(k, oracle[k]) for k in keys if b"a" <= k <= b"b"]
        assert list(db.scan(b"a", 5)) == [(k, oracle[k]) for k in keys if k >= b"a"][:5]
        # int keys are their 8 big-endian bytes, int values 8 host-order bytes
        db[258] = 7
        assert db[(258).to_bytes(8, "big")] == (7).to_bytes(8, "little")


def test_big_values_and_long_scans(pool_path):
    with pmindex.open(pool_path, "permart", size="256M", keys="bytes") as db:
        big = bytes(range(256)) * 4096  # 1 MiB: the write releases the GIL
        db[b"big"] = big
        assert db[b"big"] == big
    with pmindex.open(pool_path + "2", "permart", size="64M") as db:
        try:
            n = 70000  # more than one scan call (65536)
            for k in range(n):
                db.insert(k, k * 3)
            got = list(db.scan(0, n + 5))
            assert len(got) == n and got[0] == (0, 0) and got[-1] == (n - 1, 3 * (n - 1))
            assert sum(1 for _ in db.items(start=100)) == n - 100
        finally:
            db.close()
            import os
            os.remove(pool_path + "2")


@pytest.mark.parametrize("name", persistent_indexes())
def test_reopen_with_only_the_path_and_recover(name, pool_path):
    with pmindex.open(pool_path, name, size="16M", params=small_params(name)) as db:
        assert db.report["created"]
        for k in range(100):
            db[k] = k + 1
    with pmindex.open(pool_path) as db:  # index from the header
        assert db.name == name and db.mode == "persist"
        assert db.report["was_clean"] and not db.report["created"]
        assert len(db) == 100
        db[1000] = 5
        db.abandon()  # what a crash leaves
    assert db.closed
    with pmindex.open(pool_path, name, create=False) as db:
        r = db.report
        assert not r["was_clean"] and r["traced_blocks"] > 0 and r["recover_seconds"] >= 0
        assert len(db) == 101 and db[1000] == 5 and db.check()


def test_params_and_repr(pool_path):
    with pmindex.open(pool_path, "fptree", size="16M", params={"leaf": 16}) as db:
        assert "fptree" in repr(db) and "keys=u64" in repr(db)
        assert db.concurrent in (True, False) and db.scan_guarantee
        assert db.max_key == 8 and db.max_value == 8
    assert "closed" in repr(db)


def test_mapping_abc():
    from collections.abc import Mapping, MutableMapping
    assert issubclass(pmindex.Index, MutableMapping) and issubclass(pmindex.Index, Mapping)


def test_parse_size():
    assert pmindex.parse_size("1G") == 1 << 30
    assert pmindex.parse_size("512m") == 512 << 20
    assert pmindex.parse_size("2^20") == 1 << 20
    assert pmindex.parse_size(4096) == 4096
