#!/usr/bin/env python3
"""What the Python binding costs per operation (docs/results/python.md).

    python3 docs/results/python_overhead.py OUT.json [--records N] [--reps R] [--index I]

Fills a keys=u64 index with N random 64-bit keys, then times, in one thread,
N lookups in random order through db.get(k), db[k] and `k in db` (results
kept in a list), a full iteration of db.items(), and 10,000 scans of 100
records (db.scan(k, 100) consumed) from random present keys; each R times, medians reported in ns per operation
(per record for the iterations). A plain loop over the same key list (and a
dict's get) are timed too, so the interpreter's own share can be told apart.
The C++ side is `pmindex bench` on the same index and size (see python.md).
"""
import argparse
import json
import os
import random
import statistics
import time

import pmindex


def timed(fn, n):
    """(wall, thread CPU) ns per operation: CPU time is what `pmindex bench`
    reports as mops_cpu, steadier on a machine shared with other work."""
    t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    fn()
    return (time.perf_counter_ns() - t0) / n, (time.thread_time_ns() - c0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--records", type=int, default=1 << 20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--index", default="permart")
    ap.add_argument("--pool", default=f"/dev/shm/pmindex-pyoverhead-{os.getpid()}.pool")
    a = ap.parse_args()
    rng = random.Random(1)
    keys = list({rng.getrandbits(64) for _ in range(a.records)})
    n = len(keys)
    starts = rng.sample(keys, 10000)
    res = {}
    try:
        with pmindex.open(a.pool, a.index, size="2G") as db:
            t0 = time.perf_counter()
            for k in keys:
                db.insert(k, k ^ 0x5555)
            res["insert_ns_python"] = (time.perf_counter() - t0) * 1e9 / n
            rng.shuffle(keys)
            d = dict.fromkeys(keys, 1)
            get = db.get
            cases = {
                "loop_only": lambda: [None for k in keys],
                "dict_get": lambda: [d.get(k) for k in keys],
                "db_get": lambda: [get(k) for k in keys],
                "db_getitem": lambda: [db[k] for k in keys],
                "db_contains": lambda: [k in db for k in keys],
            }
            runs = {c: [] for c in cases}
            runs["items_per_record"] = []
            runs["scan100_per_record"] = []
            for _ in range(a.reps):
                for c, fn in cases.items():
                    runs[c].append(timed(fn, n))
                runs["items_per_record"].append(timed(lambda: sum(1 for _ in db.items()), n))
                runs["scan100_per_record"].append(
                    timed(lambda: sum(1 for s in starts for _ in db.scan(s, 100)), 100 * len(starts)))
            assert db.check()
        # The binding's own cost: the same calls on a one-record index with
        # sequential int keys (no cache misses on the index or the keys).
        seq = list(range(1 << 20))
        with pmindex.open(a.pool + ".tiny", a.index, mode="dram") as tiny:
            tiny[5] = 1
            small = {5: 1}
            tget = tiny.get
            tiny_cases = {
                "tiny_loop_only": lambda: [None for k in seq],
                "tiny_dict_get": lambda: [small.get(k) for k in seq],
                "tiny_db_get": lambda: [tget(k) for k in seq],
                "tiny_db_contains": lambda: [k in tiny for k in seq],
            }
            for c in tiny_cases:
                runs[c] = []
            for _ in range(a.reps):
                for c, fn in tiny_cases.items():
                    runs[c].append(timed(fn, len(seq)))
            res.update({f"{c}_ns": statistics.median(w for w, _ in v) for c, v in runs.items()})
            res.update({f"{c}_cpu_ns": statistics.median(c_ for _, c_ in v) for c, v in runs.items()})
            res["runs_ns"] = runs
            res["records"] = n
            res["index"] = a.index
    finally:
        if os.path.exists(a.pool):
            os.remove(a.pool)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: round(v, 1) for k, v in res.items() if isinstance(v, float)}))


if __name__ == "__main__":
    main()
