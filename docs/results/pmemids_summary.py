#!/usr/bin/env python3
"""The pmemids grid (issue 16) as markdown: medians over repeated
`pmindex bench --preset pmemids --json` files, and the study's findings as
ratios beside ours.
Usage: docs/results/pmemids_summary.py grid1.json grid2.json ..."""
import json
import statistics
import sys
from collections import defaultdict

MODES = ("dram", "volatile", "persist", "tx")
# The study's single-thread KTPS (MSST'20, Optane DC): DRAM read, Persist
# read, DRAM write, Persist write, Trans write.
STUDY = {
    "bplustree": (3292, 2145, 2381, 793, 339),
    "hashtable": (5337, 2522, 3307, 889, 353),
    "skiplist": (1036, 512, 850, 310, 243),
    "rbtree": (1908, 1046, 1366, 465, 253),
    "arraylist": (9843, 6199, 5164, 1175, 388),
}

docs = [json.load(open(p)) for p in sys.argv[1:]]
ktps = defaultdict(list)  # (index, threads, read?, mode) -> KTPS per file
per_grid = []  # per file: (index, threads, read?, mode) -> KTPS
ff = {}  # (index, threads, mode) -> (flushes, fences) per write op
order = []
starved = []  # runs whose threads did not have their CPUs (another process ran)
for d in docs:
    per_grid.append({})
    for r in d["results"]:
        if not r.get("check", {}).get("ok", True):
            continue
        read = r["workload"] == "pmemids-read"
        if r["run"].get("mops_cpu", 0) > 1.15 * r["run"]["mops"]:
            starved.append(f"{r['index']} {r['threads']}t {r['mode']} {r['workload']} "
                           f"({r['run']['mops_cpu'] / r['run']['mops']:.2f}x)")
        key = (r["index"], r["threads"])
        if key not in order:
            order.append(key)
        ktps[key + (read, r["mode"])].append(r["run"]["mops"] * 1000)
        per_grid[-1][key + (read, r["mode"])] = r["run"]["mops"] * 1000
        if not read:
            ff[key + (r["mode"],)] = (r["run"]["flushes_per_op"], r["run"]["fences_per_op"])


def ratio(a, b):
    """Median over the grids of the ratio of cells a and b, each grid's pair
    measured side by side (a grid runs the modes of a structure back to back)."""
    rs = [g[a] / g[b] for g in per_grid if a in g and b in g and g[b]]
    return statistics.median(rs) if rs else float("nan")


def med(k):
    xs = ktps.get(k, [])
    return statistics.median(xs) if xs else float("nan")


def spread(k):
    xs = ktps.get(k, [])
    return (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 else 0.0


c = docs[0]["context"]
o = c["options"]
print(f"pmemids grid: {o['records']} records, {o['ops']} ops per run, {o['value_size']}-byte values, "
      f"--parallel {o['parallel']}, medians of {len(docs)} grids; {c['cpu']}, {c['cores']} cores, "
      f"flush {c['flush_instruction']}, commit {c['git_commit'][:7]}")
print()
print("KTPS (all threads); flushes/fences per write-workload operation")
print()
print("| index | threads | " + " | ".join(f"read {m}" for m in MODES) + " | "
      + " | ".join(f"write {m}" for m in MODES) + " | persist fl/fe | tx fl/fe |")
print("|---|---|" + "---|" * (2 * len(MODES) + 2))
worst = 0.0
for idx, t in sorted(order, key=lambda k: (k[1], k[0])):
    cells = []
    for read in (True, False):
        for m in MODES:
            cells.append("%.0f" % med((idx, t, read, m)))
            worst = max(worst, spread((idx, t, read, m)))
    for m in ("persist", "tx"):
        f = ff.get((idx, t, m))
        cells.append("%.2f / %.2f" % f if f else "-")
    print(f"| {idx} | {t} | " + " | ".join(cells) + " |")
print()
print(f"largest spread (max-min)/median of a cell over the grids: {worst:.0%}")
if starved:
    print()
    print("WARNING: runs with operations per CPU-second > 1.15x per wall second (their threads waited "
          "for a CPU): " + ", ".join(starved))
print()
print("The study's findings at 1 thread, ours beside them (ours: the median over the grids of each "
      "grid's ratio):")
print()
print("| index | DRAM/Persist read: study | ours | DRAM/Persist write: study | ours | "
      "Persist/Trans write: study | ours |")
print("|---|---|---|---|---|---|---|")
for idx, t in sorted(order):
    if t != 1:
        continue
    s = STUDY.get(idx)
    r = (ratio((idx, 1, True, "dram"), (idx, 1, True, "persist")),
         ratio((idx, 1, False, "dram"), (idx, 1, False, "persist")),
         ratio((idx, 1, False, "persist"), (idx, 1, False, "tx")))
    st = lambda a, b: "%.2f" % (s[a] / s[b]) if s else "-"
    print(f"| {idx} | {st(0, 1)} | {r[0]:.2f} | {st(2, 3)} | {r[1]:.2f} | {st(3, 4)} | {r[2]:.2f} |")
print()
print("The study's single-thread KTPS (Optane DC) / ours (median), DRAM read, Persist read, DRAM write, "
      "Persist write, Trans write:")
print()
print("| index | DRAM read | Persist read | DRAM write | Persist write | Trans write |")
print("|---|---|---|---|---|---|")
for idx, s in STUDY.items():
    ours = (med((idx, 1, True, "dram")), med((idx, 1, True, "persist")), med((idx, 1, False, "dram")),
            med((idx, 1, False, "persist")), med((idx, 1, False, "tx")))
    print(f"| {idx} | " + " | ".join("%d / %.0f" % (a, b) for a, b in zip(s, ours)) + " |")
