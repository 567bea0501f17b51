# The batch calls: get_many and put_many against a dict oracle on every
# index, scans into lists (and numpy arrays) in one call, and their errors.
# That they release the GIL is in test_gil.py.
import random

import pytest

import pmindex
from conftest import all_indexes, key_limit, mode_of, small_params


def ordered(name):
    return next(i for i in pmindex.indexes() if i["name"] == name)["ordered"]


@pytest.mark.parametrize("name", all_indexes())
def test_get_many_and_put_many_match_dict(name, pool_path):
    rng = random.Random(5)
    space = key_limit(name) or 1 << 64
    oracle = {}
    with pmindex.open(pool_path, name, mode=mode_of(name), size="32M", params=small_params(name)) as db:
        for _ in range(20):
            items = [(rng.randrange(min(space, 3000)), rng.randrange(1 << 64)) for _ in range(rng.randrange(200))]
            new = len({k for k, _ in items} - set(oracle))
            assert db.put_many(items) == new
            oracle.update(items)
            keys = [rng.randrange(min(space, 3000)) for _ in range(300)]
            assert db.get_many(keys) == [oracle.get(k) for k in keys]
            assert db.get_many(keys, -1) == [oracle.get(k, -1) for k in keys]
        assert db.put_many({}) == 0 and db.get_many([]) == []
        assert db.put_many(dict(sorted(oracle.items())[:10])) == 0  # a dict, in key order: all present
        assert db.get_many(iter(oracle)) == list(oracle.values())  # any iterable
        assert len(db) == len(oracle) and db.check()
        if ordered(name):
            want = sorted(oracle.items())
            assert db.scan_list(None, len(want) + 1) == want
            assert db.scan_list(want[3][0], 5) == want[3:8]
            assert db.range_list(want[2][0], want[9][0]) == want[2:10]
            assert db.scan_list(0, 0) == []


def test_batches_with_byte_keys(pool_path):
    with pmindex.open(pool_path, "permart", size="16M", keys="bytes") as db:
        assert db.put_many([(b"a", b"1"), ("b", "2"), (b"", b""), (b"a", b"3")]) == 3
        assert db.get_many([b"a", "b", b"", b"zz"]) == [b"3", b"2", b"", None]
        assert db.scan_list(b"a", 10) == [(b"a", b"3"), (b"b", b"2")]
        big = bytes(1 << 20)
        db.put_many({b"big": big})
        assert db.get_many([b"big"]) == [big]
        with pytest.raises(pmindex.KeyTooLong):
            db.get_many([b"k" * (db.max_key + 1)])
        with pytest.raises(pmindex.Unsupported):
            db.scan_arrays(None, 5)  # arrays of uint64: keys=u64 only


def test_u64_index_takes_8_byte_keys_and_index_objects_in_batches(pool_path):
    with pmindex.open(pool_path, "fptree", size="16M") as db:
        db.put_many([(1, 10), ((2).to_bytes(8, "big"), 20)])
        assert db.get_many([1, 2, (1).to_bytes(8, "big")]) == [10, 20, 10]


def test_scan_arrays(pool_path):
    np = pytest.importorskip("numpy")  # optional: the package does not need numpy
    with pmindex.open(pool_path, "permart", size="16M") as db:
        db.put_many((k, k * 7) for k in range(1000))
        keys, values = db.scan_arrays(10, 100)
        assert keys.dtype == np.uint64 and values.dtype == np.uint64
        assert keys.tolist() == list(range(10, 110)) and values.tolist() == [k * 7 for k in range(10, 110)]
        keys, values = db.scan_arrays(None, 1 << 62)
        assert len(keys) == 1000 and int(keys[-1]) == 999
        # numpy integers are keys too, and a numpy array an iterable of them
        assert db.get_many(np.arange(5, dtype=np.uint64)) == [0, 7, 14, 21, 28]
        assert db[np.uint64(3)] == 21


def test_batch_argument_errors_write_nothing(pool_path):
    with pmindex.open(pool_path, "permart", size="8M") as db:
        with pytest.raises(TypeError, match="^value must be int \\(or 8 bytes\\), not NoneType$"):
            db.put_many([(1, 1), (2, None)])
        with pytest.raises(TypeError, match="^key must be int \\(or 8 bytes\\), not str$"):
            db.put_many({1: 1, "x": 2})
        with pytest.raises(TypeError, match="pair"):
            db.put_many([(1, 2, 3)])
        with pytest.raises(TypeError, match="^items must be"):
            db.put_many(5)
        with pytest.raises(TypeError, match="^keys must be"):
            db.get_many(5)
        with pytest.raises(TypeError, match="^key must be"):
            db.get_many([1, None])
        with pytest.raises(ValueError, match="count must be >= 0"):
            db.scan_list(0, -1)
        assert len(db) == 0
