#!/usr/bin/env python3
"""Medians over the repetitions of docs/results/server.json, as markdown tables.
Usage: docs/results/server_summary.py docs/results/server.json"""
import json
import statistics
import sys
from collections import defaultdict

d = json.load(open(sys.argv[1]))
runs = d["runs"]
targets = []
for r in runs:
    if r["target"] not in targets:
        targets.append(r["target"])


def med(xs):
    return statistics.median(xs) if xs else float("nan")


print("mc-benchmark style (pmindex_mcload): kops/s, median of %d; p50/p99 latency in us" % d["context"]["reps"])
print()
print("| target | conns | SET kops/s | SET p50/p99 | GET kops/s | GET p50/p99 |")
print("|---|---|---|---|---|---|")
for conns in (4, 50):
    for t in targets:
        row = []
        for ph in ("set", "get"):
            rs = [r for r in runs if r["tool"] == "mcload" and r["target"] == t and r["conns"] == conns and r["phase"] == ph]
            if not rs:
                row += ["-", "-"]
                continue
            row.append("%.1f" % (med([r["ops_per_sec"] for r in rs]) / 1000))
            row.append("%d / %d" % (med([r["p50_us"] for r in rs]), med([r["p99_us"] for r in rs])))
        print(f"| {t} | {conns} | " + " | ".join(row) + " |")
print()
print("memaslap (memcaslap, 1 thread): kops/s, median; p50/p99 upper bounds of log2 buckets, us")
print()
groups = defaultdict(list)
for r in runs:
    if r["tool"] == "memaslap":
        groups[(r["mix"], r["keys_values"], r["conns"], r["target"])].append(r)
print("| get/set | keys / values | conns | " + " | ".join(targets) + " |")
print("|---|---|---|" + "---|" * len(targets))
for mix in ("90/10", "50/50"):
    for kv in ("20B/32B", "16-250B/32B-4KiB"):
        for conns in (4, 50):
            cells = []
            for t in targets:
                rs = groups.get((mix, kv, conns, t), [])
                if not rs:
                    cells.append("-")
                    continue
                cells.append("%.1f (%d/%d)" % (med([r["ops_per_sec"] for r in rs]) / 1000,
                                               med([r["p50_us_upper"] for r in rs]), med([r["p99_us_upper"] for r in rs])))
            print(f"| {mix} | {kv} | {conns} | " + " | ".join(cells) + " |")
