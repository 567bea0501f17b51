# Every error a user can cause is a typed Python exception (code = the
# command line's exit code), never a crash of the interpreter, and leaves the
# pool and the index usable.
import os
import struct

import pytest

import pmindex

CODES = {
    "CheckFailed": 1, "UsageError": 2, "PoolNotFound": 3, "NotAPool": 4, "BadVersion": 5,
    "WrongIndex": 6, "PoolTooSmall": 7, "PoolFull": 8, "KeyTooLong": 9, "PoolIOError": 10,
    "CorruptPool": 11, "Unsupported": 12, "ValueTooLong": 13, "WrongMode": 14, "IndexClosed": 2,
}


def test_exception_classes_mirror_the_exit_codes():
    for name, code in CODES.items():
        cls = getattr(pmindex, name)
        assert issubclass(cls, pmindex.Error) and cls.code == code, name
        assert cls.__module__ == "pmindex"
    assert issubclass(pmindex.PoolNotFound, FileNotFoundError)
    assert issubclass(pmindex.KeyTooLong, ValueError)
    assert issubclass(pmindex.PoolIOError, OSError)


def make_pool(path, index="permart", **kw):
    with pmindex.open(path, index, size="8M", **kw) as db:
        for k in range(50):
            db[k] = k
    return path


def test_pool_not_found(pool_path):
    with pytest.raises(pmindex.PoolNotFound):
        pmindex.open(pool_path)
    with pytest.raises(pmindex.PoolNotFound):
        pmindex.open(pool_path, "permart", create=False)
    assert not os.path.exists(pool_path)


def test_not_a_pool(pool_path):
    with open(pool_path, "wb") as f:
        f.write(b"this is not a pool" * 100000)
    with pytest.raises(pmindex.NotAPool):
        pmindex.open(pool_path)
    with pytest.raises(pmindex.NotAPool):
        pmindex.open(pool_path, "permart")
    with open(pool_path, "rb") as f:  # left untouched
        assert f.read(18) == b"this is not a pool"


def test_wrong_index_leaves_the_pool_as_it_was(pool_path):
    make_pool(pool_path)
    with pytest.raises(pmindex.WrongIndex, match="permart"):
        pmindex.open(pool_path, "wort")
    with pmindex.open(pool_path) as db:
        assert db.report["was_clean"] and len(db) == 50


def test_bad_version(pool_path):
    make_pool(pool_path)
    with open(pool_path, "r+b") as f:
        f.seek(8)  # pool_header.format_version
        f.write(struct.pack("<I", 999))
    with pytest.raises(pmindex.BadVersion):
        pmindex.open(pool_path)


def test_pool_too_small(pool_path):
    make_pool(pool_path)
    os.truncate(pool_path, 65536)  # the header says 8M
    with pytest.raises(pmindex.PoolTooSmall):
        pmindex.open(pool_path, "permart")
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path + "x", "permart", size="0")


def test_corrupt_stored_parameters(pool_path):
    make_pool(pool_path, "fptree")
    with open(pool_path, "r+b") as f:
        f.seek(192)  # pool_header.index_params
        f.write(b"leaf=zzz\0")
    with pytest.raises(pmindex.CorruptPool):
        pmindex.open(pool_path)


def test_full_pool_fails_the_write_and_keeps_the_index(pool_path):
    with pmindex.open(pool_path, "permart", size="1M", keys="bytes") as db:
        stored = 0
        with pytest.raises(pmindex.PoolFull):
            for k in range(1_000_000):
                db[k.to_bytes(8, "big")] = bytes(200)
                stored += 1
        assert stored > 0 and len(db) == stored and db.check()
        assert db[(0).to_bytes(8, "big")] == bytes(200)
        # Space comes back: removes on a full pool first pay back the pool's remove
        # reserve (16 blocks per leaf shape), then the write works again. (One remove
        # was enough while a new key byte copied its node: the fill then stopped at a
        # node's class with leaf blocks to spare.)
        for k in range(64):
            del db[k.to_bytes(8, "big")]
        db[b"again"] = b"x"
        assert db[b"again"] == b"x"
    with pmindex.open(pool_path) as db:
        assert len(db) == stored - 64 + 1 and db.check()


def test_key_and_value_too_long(pool_path):
    with pmindex.open(pool_path, "permart", size="16M", keys="bytes") as db:
        with pytest.raises(pmindex.KeyTooLong):
            db[b"k" * (db.max_key + 1)] = b"v"
        with pytest.raises(pmindex.KeyTooLong):
            db.get(b"k" * (db.max_key + 1))
        with pytest.raises(pmindex.ValueTooLong):
            db.insert(b"k", b"v" * (db.max_value + 1))
        assert len(db) == 0 and db.check()
        db[b"k" * db.max_key] = b"ok"  # the limit itself is fine
        assert db[b"k" * db.max_key] == b"ok"


def test_unsupported_and_usage_errors(pool_path):
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path, "no-such-index")
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path, "permart", mode="fast")
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path, "permart", params="nonsense=1")
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path, "permart", keys="strings")
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path, "permart", size="lots")
    with pytest.raises(pmindex.UsageError):
        pmindex.open(pool_path, "permart", flush="magic")
    with pytest.raises(pmindex.Unsupported):
        pmindex.open(pool_path, "stdmap", mode="persist")
    assert not os.path.exists(pool_path)  # no bad option created a file
    with pmindex.open(pool_path, "permart", size="8M") as db:  # keys=u64
        with pytest.raises(pmindex.Unsupported):
            db[b"short"] = 1
        with pytest.raises(pmindex.Unsupported):
            db[1] = b"short"  # 5 bytes: not a u64 value
        with pytest.raises(TypeError):
            db["a str"] = 1
        with pytest.raises(TypeError):
            db.get(1.5)
        with pytest.raises(OverflowError):
            db[-1] = 1
        with pytest.raises(OverflowError):
            db[1 << 64] = 1
        assert len(db) == 0 and db.check()


def test_pool_exists_or_in_use(pool_path):
    make_pool(pool_path)
    with pytest.raises(pmindex.PoolIOError):
        pmindex.open(pool_path, "permart", exclusive=True)
    with pmindex.open(pool_path) as db:
        with pytest.raises(pmindex.PoolIOError):
            pmindex.open(pool_path)  # already open
        assert len(db) == 50


def test_closed_index_use(pool_path):
    db = pmindex.open(pool_path, "permart", size="8M")
    db[1] = 2
    it = db.items()
    scan = db.scan(0, 10)
    db.close()
    db.close()  # idempotent
    assert db.closed
    calls = [
        lambda: db[1], lambda: db.get(1), lambda: db.__setitem__(1, 3), lambda: db.__delitem__(1),
        lambda: 1 in db, lambda: len(db), lambda: db.insert(1, 2), lambda: db.update(1, 2),
        lambda: db.upsert(1, 2), lambda: db.remove(1), lambda: list(db.scan(0, 5)),
        lambda: list(db.range(0, 5)), lambda: list(db.items()), lambda: list(db), lambda: db.stats(),
        lambda: db.check(), lambda: next(it), lambda: next(scan), lambda: db.update_existing(1, 2),
        lambda: db.update({1: 2}), lambda: db.get_many([1]), lambda: db.put_many([(1, 2)]), lambda: db.pop(1),
        lambda: db.pop(1, None), lambda: db.setdefault(1, 2), lambda: db.popitem(), lambda: db.clear(),
        lambda: db.scan_list(0, 5), lambda: db.range_list(0, 5), lambda: db.scan_arrays(0, 5),
    ]
    for call in calls:
        with pytest.raises(pmindex.IndexClosed):
            call()
    assert db.report["created"]  # the open's report stays readable
    with pmindex.open(pool_path) as db2:
        assert db2[1] == 2 and db2.report["was_clean"]


def one_line(e):
    text = str(e.value)
    assert "\n" not in text and "Invoked with" not in text and "incompatible function" not in text, text
    return text


def test_wrong_argument_types_say_what_was_expected(pool_path):
    with pmindex.open(pool_path, "permart", size="8M") as db:
        db[1] = 2
        cases = [
            (lambda: db.__setitem__(1, None), TypeError, "value must be int (or 8 bytes), not NoneType"),
            (lambda: db.__setitem__(None, 1), TypeError, "key must be int (or 8 bytes), not NoneType"),
            (lambda: db.get(None), TypeError, "key must be int (or 8 bytes), not NoneType"),
            (lambda: db[1.5], TypeError, "key must be int (or 8 bytes), not float"),
            (lambda: None in db, TypeError, "key must be int (or 8 bytes), not NoneType"),
            (lambda: db.insert(1, "x"), TypeError, "value must be int (or 8 bytes), not str"),
            (lambda: db.scan(0, -1), ValueError, "count must be >= 0, not -1"),
            (lambda: db.scan(0, "5"), TypeError, "count must be an int, not str"),
            (lambda: db.scan(0, 2.0), TypeError, "count must be an int, not float"),
            (lambda: db.range(None, 5), TypeError, "key must be int (or 8 bytes), not NoneType"),
            (lambda: db.scan_list(0, -3), ValueError, "count must be >= 0, not -3"),
            (lambda: db.__setitem__(-1, 1), OverflowError, "key must be in 0..2**64-1, not -1"),
        ]
        for call, cls, message in cases:
            with pytest.raises(cls) as e:
                call()
            assert one_line(e) == message
        assert list(db.scan(None, 5)) == [(1, 2)]  # None: from the first key
        assert len(db) == 1 and db.check()
    with pmindex.open(pool_path + "b", "permart", size="8M", keys="bytes") as db:
        try:
            with pytest.raises(TypeError) as e:
                db[b"k"] = None
            assert one_line(e) == "value must be bytes (or str, or int), not NoneType"
            with pytest.raises(TypeError) as e:
                db.get([1])
            assert one_line(e) == "key must be bytes (or str, or int), not list"
        finally:
            db.close()
            os.remove(pool_path + "b")


def test_second_open_in_this_process_says_so(pool_path):
    make_pool(pool_path)
    with pmindex.open(pool_path) as db:
        for again in (lambda: pmindex.open(pool_path), lambda: pmindex.open(pool_path, "permart"),
                      lambda: pmindex.open(pool_path, create=False)):
            with pytest.raises(pmindex.PoolIOError) as e:
                again()
            assert "already open in this process" in one_line(e) and "another process" not in str(e.value)
        link = pool_path + ".link"  # the same file by another name
        os.link(pool_path, link)
        try:
            with pytest.raises(pmindex.PoolIOError, match="already open in this process"):
                pmindex.open(link)
        finally:
            os.remove(link)
        # another process still hears about another process
        import subprocess
        import sys
        out = subprocess.run([sys.executable, "-c", "import pmindex, sys\n"
                              "try:\n pmindex.open(sys.argv[1])\n"
                              "except pmindex.PoolIOError as e:\n print(e)\n", pool_path],
                             capture_output=True, text=True, check=True).stdout
        assert "in use by another process" in out, out
        assert len(db) == 50
    for done in (lambda d: d.close(), lambda d: d.abandon()):
        db = pmindex.open(pool_path)  # free again once closed, or abandoned
        done(db)
    with pmindex.open(pool_path) as db:
        assert len(db) == 50


def test_errors_name_the_path_given(pool_path):
    missing = os.path.join(os.path.dirname(pool_path), f"no-such-dir-{os.getpid()}", "x.pool")
    with pytest.raises(pmindex.PoolIOError) as e:
        pmindex.open(missing, "permart", size="8M")
    text = one_line(e)
    assert missing in text and ".creating." not in text, text
    assert "No such file or directory" in text
