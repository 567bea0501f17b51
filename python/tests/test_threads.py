# Several Python threads on one index: writers on disjoint keys, readers and
# scanners beside them, and a close() racing with all of them. Nothing may
# crash; every acknowledged write must be there afterwards.
import threading

import pytest

import pmindex
from conftest import persistent_indexes, small_params


def run_threads(targets):
    errors = []

    def wrap(fn, *args):
        try:
            fn(*args)
        except BaseException as e:  # reported below, with the thread's exception
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.parametrize("name", ["permart", "fptree", "canary"])
def test_writers_readers_and_scanners(name, pool_path):
    per_thread, nthreads = 2000, 4
    with pmindex.open(pool_path, name, size="64M") as db:
        assert db.concurrent

        def writer(t):
            for i in range(per_thread):
                k = i * nthreads + t
                assert db.insert(k, k + 1)
                assert db[k] == k + 1

        def scanner():
            for _ in range(20):
                prev = -1
                for k, v in db.scan(0, 500):
                    assert k > prev and v == k + 1
                    prev = k
                for k, v in db.range(100, 300):
                    assert 100 <= k <= 300 and v == k + 1

        errors = run_threads([(writer, t) for t in range(nthreads)] + [(scanner,), (scanner,)])
        assert not errors, errors
        assert len(db) == per_thread * nthreads
        assert list(db.keys()) == list(range(per_thread * nthreads))
        assert db.check()


def test_bytes_keys_from_threads(pool_path):
    with pmindex.open(pool_path, "permart", size="64M", keys="bytes") as db:
        def writer(t):
            for i in range(1500):
                db[b"t%d-%05d" % (t, i)] = b"v" * (i % 50)

        assert not run_threads([(writer, t) for t in range(3)])
        assert len(db) == 4500 and db.check()
        assert [k for k in db.keys(start=b"t1-")][:2] == [b"t1-00000", b"t1-00001"]


def test_close_while_threads_run(pool_path):
    db = pmindex.open(pool_path, "permart", size="64M")
    for k in range(5000):
        db[k] = k
    started = threading.Barrier(4)

    def user(kind):
        started.wait()
        try:
            while True:
                if kind == 0:
                    for k in range(5000):
                        db.get(k)
                elif kind == 1:
                    for _ in db.items():
                        pass
                else:
                    for k in range(5000, 100000):
                        db[k] = k
        except pmindex.IndexClosed:
            return  # the expected end

    threads = [threading.Thread(target=user, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    started.wait()
    db.close()
    for t in threads:
        t.join()
    with pmindex.open(pool_path) as db2:
        assert db2.report["was_clean"] and db2.check() and len(db2) >= 5000


@pytest.mark.parametrize("name", persistent_indexes())
def test_every_persistent_index_from_two_threads(name, pool_path):
    with pmindex.open(pool_path, name, size="32M", params=small_params(name)) as db:
        def writer(t):
            for i in range(500):
                db.upsert(i * 2 + t, i)

        assert not run_threads([(writer, 0), (writer, 1)])
        assert len(db) == 1000 and db.check()
