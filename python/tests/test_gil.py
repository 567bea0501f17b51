# Long calls release the GIL, and an index marked concurrent is used by
# several Python threads at once. Proved without timing: with a switch
# interval of 1000 s CPython hands the GIL to another thread only when its
# holder blocks or releases it, so a watcher thread woken before each call
# gets to run Python code during that call only if the call released the
# GIL; otherwise it cannot run before the loop is over. Each test fails if
# its call keeps the GIL (checked by removing each nb::gil_scoped_release).
import sys
import threading

import pytest

import pmindex

ROUNDS = 2000  # rounds of the steps before giving up (only reached when a call keeps the GIL)


def run_with_watcher(steps, on_wake):
    """Runs the (name, call) steps in turn on one thread, up to ROUNDS times,
    while a watcher thread, woken before each step, runs on_wake(name) once
    it gets the GIL; on_wake returns True when the loop may stop. Returns
    the names of the steps the watcher ran during."""
    current = [None]
    seen = []
    done = [False]
    stop = [False]
    errors = []
    wake = threading.Event()

    def watcher():
        try:
            while True:
                wake.wait()  # blocks with the GIL released
                if stop[0]:
                    return
                seen.append(current[0])  # we hold the GIL: the caller is inside a call that released it
                if on_wake(current[0]):
                    done[0] = True
                wake.clear()
        except BaseException as e:  # reported by the test
            errors.append(e)
            done[0] = True

    def caller():
        try:
            for _ in range(ROUNDS):
                for name, call in steps:
                    current[0] = name
                    wake.set()  # an uncontended Event.set keeps the GIL
                    call()
                if done[0]:
                    break
        except BaseException as e:
            errors.append(e)
        finally:
            stop[0] = True
            wake.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    try:
        w = threading.Thread(target=watcher)
        w.start()  # returns once the watcher blocks in wake.wait()
        c = threading.Thread(target=caller)
        c.start()
        c.join()
        w.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    return seen


def released_in(steps):
    """The set of step names during which another thread ran Python code."""
    names = {n for n, _ in steps}
    got = set()

    def on_wake(name):
        got.add(name)
        return got >= names

    run_with_watcher(steps, on_wake)
    return got


N = 20000


@pytest.fixture
def filled(pool_path):
    with pmindex.open(pool_path, "permart", size="64M") as db:
        for k in range(N):
            db[k] = k + 1
        yield db


KEYS = list(range(0, 2 * N, 2))


@pytest.mark.parametrize("what", ["scan", "items", "range", "check", "stats", "len", "get_many", "put_many",
                                  "scan_list", "range_list", "scan_arrays", "clear"])
def test_long_call_releases_the_gil(filled, what):
    db = filled
    call = {
        "scan": lambda: sum(1 for _ in db.scan(0, N)),
        "items": lambda: sum(1 for _ in db.items(start=N // 2)),
        "range": lambda: sum(1 for _ in db.range(0, N)),
        "check": db.check,
        "stats": db.stats,
        "len": lambda: len(db),
        "get_many": lambda: db.get_many(KEYS),
        "put_many": lambda: db.put_many(zip(KEYS, KEYS)),
        "scan_list": lambda: db.scan_list(0, N),
        "range_list": lambda: db.range_list(0, N),
        "scan_arrays": lambda: db.scan_arrays(0, N),
        "clear": lambda: db.clear(),
    }[what]
    if what == "scan_arrays":
        pytest.importorskip("numpy")
    assert released_in([(what, call)]) == {what}


def test_large_write_releases_the_gil(pool_path):
    big = bytes(range(256)) * 512  # 128 KiB: over the 64 KiB above which writes release
    with pmindex.open(pool_path, "permart", size="64M", keys="bytes") as db:
        assert released_in([("write", lambda: db.upsert(b"big", big))]) == {"write"}
        assert db[b"big"] == big


def test_open_and_close_release_the_gil(pool_path):
    with pmindex.open(pool_path, "fptree", size="64M") as db:
        for k in range(5000):
            db[k] = k
    held = []
    got = released_in([("open", lambda: held.append(pmindex.open(pool_path))), ("close", lambda: held.pop().close())])
    assert got == {"open", "close"}
    with pmindex.open(pool_path) as db:
        assert db.report["was_clean"] and len(db) == 5000


# The binding lets writers into a concurrent index while a scan is inside
# it: the watcher's writes (point calls, which keep the GIL) run during the
# scanner's call. Had the binding serialised them (one lock per index), a
# writer would wait for the lock with the GIL released, the scanner would
# return from its call, and the call counter would show it. (The index's own
# locks may still order them: WORT's writers wait for its readers in C++.)
@pytest.mark.parametrize("name", ["permart", "fptree", "wort"])
def test_writers_run_while_a_scan_is_inside_a_concurrent_index(pool_path, name):
    with pmindex.open(pool_path, name, size="64M") as db:
        assert db.concurrent
        for k in range(N):
            db[2 * k] = k
        calls = [0]
        next_key = [1]
        during = []

        def scan():
            prev = -1
            for k, v in db.scan(0, N):
                assert k > prev
                prev = k
            calls[0] += 1

        def write_while_scanning(_):
            before = calls[0]
            for _ in range(50):
                db[next_key[0]] = next_key[0]  # odd keys: new records beside the scanned ones
                next_key[0] += 2
            during.append(calls[0] == before)
            return len(during) >= 20

        run_with_watcher([("scan", scan)], write_while_scanning)
        assert len(during) >= 20 and all(during), during
        assert db.check()
        for k in range(1, next_key[0], 2):
            assert db[k] == k
        assert len(db) == N + len(during) * 50
