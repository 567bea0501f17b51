# Medians of docs/results/pmasstree_smo/*.json (pmindex bench, pmasstree before/after):
# python3 docs/results/pmasstree_smo_summary.py
import collections, glob, json, os, statistics

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pmasstree_smo")
cells = collections.defaultdict(list)  # (workload, threads, build) -> [(mops_cpu, mops, flushes, fences)]
for f in sorted(glob.glob(os.path.join(here, "*-t*-r*.json"))):
    build = os.path.basename(f).split("-")[0]
    for r in json.load(open(f))["results"]:
        if not r["check"]["ok"]:
            print("check failed:", f, r["workload"])
        x = r["run"]
        cells[(r["workload"], r["threads"], build)].append((x["mops_cpu"], x["mops"], x["flushes_per_op"], x["fences_per_op"]))
med = statistics.median
wls = ["ycsb-b", "ycsb-a", "update=0.9+insert=0.1", "insert=1"]
print("| workload | threads | main Mops/cpu-s | new Mops/cpu-s | new/main | main Mops/s | new Mops/s | flushes/op main/new | fences/op main/new |")
print("|---|---|---|---|---|---|---|---|---|")
for w in wls:
    for t in (1, 2):
        m, n = cells[(w, t, "main")], cells[(w, t, "new")]
        mc, nc = med([x[0] for x in m]), med([x[0] for x in n])
        print(f"| {w} | {t} | {mc:.3f} | {nc:.3f} | {nc / mc:.2f} | {med([x[1] for x in m]):.3f} | "
              f"{med([x[1] for x in n]):.3f} | {med([x[2] for x in m]):.2f} / {med([x[2] for x in n]):.2f} | "
              f"{med([x[3] for x in m]):.2f} / {med([x[3] for x in n]):.2f} |")
print()
print("| workload | main 2t/1t | new 2t/1t |")
print("|---|---|---|")
for w in wls:
    ratio = [med([x[0] for x in cells[(w, 2, b)]]) / med([x[0] for x in cells[(w, 1, b)]]) for b in ("main", "new")]
    print(f"| {w} | {ratio[0]:.2f} | {ratio[1]:.2f} |")
print()
print("Every round (Mops per CPU-second):")
for k in sorted(cells):
    print(" ", k, " ".join(f"{x[0]:.3f}" for x in cells[k]))
