#!/usr/bin/env python3
"""Medians of docs/results/permart_growth/fine.sh: Mops/s per label and
   workload, each label over BASE (default: the first run), and
   flushes/fences/allocations per op.
   python3 docs/results/permart_growth/fine.py DIR [BASE]"""
import collections, glob, json, statistics as st, sys

m, cost, labels, works = collections.defaultdict(list), collections.defaultdict(list), [], []
# Labels in the order fine.sh ran them (each run's start time), not by name.
runs = [(json.load(open(f)), f) for f in sorted(glob.glob(sys.argv[1] + "/*.json"))]
for d, f in sorted(runs, key=lambda df: df[0].get("context", {}).get("date", "")):
    for x in d["results"]:
        l = f.split("/")[-1].split("-")[0]
        w, r = x["workload"], x["run"]
        labels += [l] if l not in labels else []
        works += [w] if w not in works else []
        m[(l, w)].append(r["mops"])
        cost[(l, w)].append((r["flushes_per_op"], r["fences_per_op"], r["allocs_per_op"]))
base = sys.argv[2] if len(sys.argv) > 2 else labels[0]
labels = [base] + [l for l in labels if l != base]
print("| workload | " + " | ".join(labels) + " | " + " | ".join(f"{l}/{base}" for l in labels[1:]) +
      " | flush/fence/alloc per op " + " / ".join(labels) + " | runs |")
print("|---" * (2 * len(labels) + 2) + "|")
for w in works:
    med = {l: st.median(m[(l, w)]) for l in labels}
    c = " / ".join("/".join(f"{st.median(x[i] for x in cost[(l, w)]):.2f}" for i in range(3)) for l in labels)
    print(f"| {w} | " + " | ".join(f"{med[l]:.3f}" for l in labels) + " | " +
          " | ".join(f"{med[l] / med[base]:.2f}" for l in labels[1:]) + f" | {c} | {len(m[(base, w)])} |")
