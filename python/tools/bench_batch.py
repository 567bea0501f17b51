"""Times the Python calls of one index against each other, in one thread, for
comparison with `pmindex bench` at one thread on the same index and records:

    python3 python/tools/bench_batch.py --index permart -n 1M --json py.json
    pmindex bench --index permart -n 1M -t 1 --universe sparse --workload read100 --json read.json
    pmindex bench --index permart -n 1M -t 1 --universe sparse --workload insert=1 --ops 1M --json ins.json

It fills an index (pool on /dev/shm) with n random 64-bit keys (values = keys)
and times, on the present keys in random order: a loop of db[k], get_many in
batches, then on n fresh random keys into a second index filled alike: a loop
of db[k] = v, put_many in batches, and put_many of the same batches sorted.
Prints Mops/s (wall clock, and per thread CPU second) per call.
"""
import argparse
import json
import os
import random
import time

import pmindex


def count(text):
    text = text.upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * mult


def timed(fn, ops):
    w, c = time.perf_counter(), time.thread_time()
    fn()
    w, c = time.perf_counter() - w, time.thread_time() - c
    return {"mops": ops / w / 1e6, "mops_cpu": ops / c / 1e6 if c else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default="permart")
    ap.add_argument("-n", "--records", default="1M")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--json")
    a = ap.parse_args()
    n, b = count(a.records), a.batch
    rng = random.Random(a.seed)
    seen = set()
    while len(seen) < 2 * n:
        seen.add(rng.getrandbits(64))
    keys = list(seen)
    rng.shuffle(keys)
    present, fresh = keys[:n], keys[n:]
    out = {"index": a.index, "records": n, "batch": b, "results": {}}
    res = out["results"]
    paths = [os.path.join(a.dir, f"bench-batch-{os.getpid()}-{i}.pool") for i in range(3)]
    size = max(64 << 20, 400 * n)
    try:
        with pmindex.open(paths[0], a.index, size=size, quiet=True) as db:
            db.put_many(zip(present, present))
            order = present[:]
            rng.shuffle(order)

            def loop_get():
                get = db.__getitem__
                for k in order:
                    get(k)

            def batch_get():
                for i in range(0, n, b):
                    db.get_many(order[i:i + b])

            res["loop db[k]"] = timed(loop_get, n)
            res["get_many"] = timed(batch_get, n)
        batches = [list(zip(fresh[i:i + b], fresh[i:i + b])) for i in range(0, n, b)]
        sorted_batches = [sorted(x) for x in batches]
        for i, (name, fn) in enumerate([
            ("loop db[k] = v", lambda db: [db.__setitem__(k, v) for x in batches for k, v in x]),
            ("put_many", lambda db: [db.put_many(x) for x in batches]),
            ("put_many sorted batches", lambda db: [db.put_many(x) for x in sorted_batches]),
        ]):
            path = paths[1 + i % 2]
            with pmindex.open(path, a.index, size=size, quiet=True) as db:
                db.put_many(zip(present, present))
                res[name] = timed(lambda: fn(db), n)
            os.remove(path)
    finally:
        for p in paths:
            if os.path.exists(p):
                os.remove(p)
    for name, r in res.items():
        print(f"{name:26} {r['mops']:7.3f} Mops/s  ({r['mops_cpu']:.3f} per CPU second)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
