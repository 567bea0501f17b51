# pmindex.Index is a collections.abc.MutableMapping in full: update (dict
# semantics), pop, setdefault, popitem and clear behave as a dict's, checked
# against a dict oracle on every ordered index; the conditional update lives
# on as update_existing, and the old update(key, value) still works with a
# DeprecationWarning.
import random
import warnings
from collections.abc import MutableMapping

import pytest

import pmindex
from conftest import all_indexes, key_limit, mode_of, small_params


def info(name):
    return next(i for i in pmindex.indexes() if i["name"] == name)


def ordered_indexes():
    return [n for n in all_indexes() if info(n)["ordered"]]


def unordered_indexes():
    return [n for n in all_indexes() if not info(n)["ordered"]]


def same(db, oracle):
    assert dict(db.items()) == oracle
    assert list(db) == sorted(oracle)
    assert len(db) == len(oracle)


@pytest.mark.parametrize("name", ordered_indexes())
def test_mutable_mapping_methods_match_dict(name, pool_path):
    rng = random.Random(3)
    limit = key_limit(name) or 1 << 64
    oracle = {}
    missing = object()
    with pmindex.open(pool_path, name, mode=mode_of(name), size="32M", params=small_params(name)) as db:
        assert isinstance(db, MutableMapping)
        for step in range(400):
            k = rng.randrange(min(limit, 200))
            v = rng.randrange(1 << 64)
            op = rng.randrange(8)
            if op == 0:  # update from a dict, pairs and another mapping
                d = {rng.randrange(min(limit, 200)): rng.randrange(1000) for _ in range(rng.randrange(5))}
                assert db.update(d) is None
                oracle.update(d)
                pairs = [(k, v), (k, v + 1)]  # a later duplicate wins
                assert db.update(pairs) is None
                oracle.update(pairs)
            elif op == 1:
                assert db.pop(k, "none") == oracle.pop(k, "none")
            elif op == 2:
                if k in oracle:
                    assert db.pop(k) == oracle.pop(k)
                else:
                    with pytest.raises(KeyError):
                        db.pop(k)
            elif op == 3:
                assert db.setdefault(k, v) == oracle.setdefault(k, v)
            elif op == 4:
                if oracle:
                    got = db.popitem()
                    want = min(oracle)  # the smallest key: documented
                    assert got == (want, oracle.pop(want))
                else:
                    with pytest.raises(KeyError):
                        db.popitem()
            elif op == 5:
                assert db.update_existing(k, v) == (k in oracle)
                if k in oracle:
                    oracle[k] = v
            elif op == 6 and step % 50 == 0:
                db.clear()
                oracle.clear()
            else:
                db[k] = v
                oracle[k] = v
            assert db.get(k, missing) == oracle.get(k, missing)
        same(db, oracle)
        # update from another mapping object (keys() and []) and from an Index
        with pmindex.open(pool_path + ".src", name, mode=mode_of(name), size="8M",
                          params=small_params(name)) as src:
            try:
                src.update({1: 11, 2: 22})
                db.update(src)
                oracle.update({1: 11, 2: 22})
            finally:
                src.close()
                import os
                if os.path.exists(pool_path + ".src"):
                    os.remove(pool_path + ".src")
        same(db, oracle)
        db.clear()
        assert len(db) == 0 and list(db) == [] and db.check()
        with pytest.raises(KeyError):
            db.popitem()


def test_mapping_methods_with_byte_keys(pool_path):
    with pmindex.open(pool_path, "permart", size="16M", keys="bytes") as db:
        oracle = {}
        db.update({b"b": b"2"}, a=b"1")  # keywords are str keys: UTF-8 bytes
        oracle.update({b"b": b"2", b"a": b"1"})
        same(db, oracle)
        assert db.setdefault(b"c", b"3") == b"3" and db[b"c"] == b"3"
        assert db.setdefault(b"c", b"x") == b"3"
        assert db.popitem() == (b"a", b"1")
        assert db.pop(b"b") == b"2" and db.pop(b"b", None) is None
        assert dict(db.items()) == {b"c": b"3"}
        # str keys and values are their UTF-8 bytes on a keys=bytes index
        db["é"] = "v"
        assert db["é".encode()] == b"v" and "é" in db
        db.clear()
        assert len(db) == 0


@pytest.mark.parametrize("name", unordered_indexes())
def test_unordered_index_says_what_it_cannot_do(name, pool_path):
    with pmindex.open(pool_path, name, mode=mode_of(name), size="16M") as db:
        db.update({1: 2, 3: 4})
        assert db.pop(1) == 2 and db.setdefault(5, 6) == 6 and db[5] == 6
        with pytest.raises(pmindex.Unsupported):
            db.popitem()  # needs the smallest key: a scan
        with pytest.raises(pmindex.Unsupported):
            db.clear()


def test_mixin_contracts_on_bad_input(pool_path):
    with pmindex.open(pool_path, "permart", size="8M") as db:
        db[1] = 10
        assert db.setdefault(1) == 10  # present: no value needed
        with pytest.raises(TypeError, match="value must be int"):
            db.setdefault(2)  # absent: None is not a value (as MutableMapping's would)
        assert 2 not in db
        with pytest.raises(TypeError, match="at most 1 positional"):
            db.update({}, {}, {})
        with pytest.raises(TypeError, match="pair"):
            db.update([1, 2])
        with pytest.raises(TypeError, match="pop expected"):
            db.pop()
        # a bad item anywhere: nothing written
        with pytest.raises(TypeError):
            db.update([(5, 50), (6, None)])
        assert 5 not in db and len(db) == 1


def test_old_update_form_warns_and_still_works(pool_path):
    with pmindex.open(pool_path, "permart", size="8M") as db:
        db[1] = 10
        with pytest.warns(DeprecationWarning, match="update_existing"):
            assert db.update(1, 11) is True
        with pytest.warns(DeprecationWarning):
            assert db.update(2, 5) is False
        with pytest.warns(DeprecationWarning):
            assert db.update(key=1, value=12) is True
        assert dict(db.items()) == {1: 12}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            db.update({3: 30})  # the dict form does not warn
            assert db.update_existing(3, 31) and not db.update_existing(4, 1)
        assert dict(db.items()) == {1: 12, 3: 31}
