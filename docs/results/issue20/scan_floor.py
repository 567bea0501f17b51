#!/usr/bin/env python3
"""scan100 against the release before #20 and against the same build with
   every record in cache (10K records), from fine.sh runs:
     DIR/1m/INDEX/{before,head}-scan=1_100-rN.json, DIR/10k/INDEX/head-...
   python3 docs/results/issue20/scan_floor.py DIR [HEAD_LABEL]"""
import glob, json, os, statistics as st, sys

d, head = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "head"

def med(path, label, work):
    v = [x["run"]["mops"] for f in glob.glob(f"{path}/{label}-{work.replace(':', '_')}-r*.json")
         for x in json.load(open(f))["results"]]
    return st.median(v) if v else None

print("| index | scan100 before | now | now/before | 3x before | in cache (10K) | in cache / 3x before "
      "| scan1000 now/before |")
print("|---" * 8 + "|")
for i in sorted(os.listdir(f"{d}/1m")):
    b, h = med(f"{d}/1m/{i}", "before", "scan=1:100"), med(f"{d}/1m/{i}", head, "scan=1:100")
    b1, h1 = med(f"{d}/1m/{i}", "before", "scan=1:1000"), med(f"{d}/1m/{i}", head, "scan=1:1000")
    c = med(f"{d}/10k/{i}", head, "scan=1:100")
    f = lambda x: "-" if x is None else f"{x:.3f}"
    r = lambda x, y: "-" if x is None or y is None else f"{x / y:.2f}"
    print(f"| {i} | {f(b)} | {f(h)} | {r(h, b)} | {f(3 * b if b else None)} | {f(c)} | "
          f"{r(c, 3 * b if b else None)} | {r(h1, b1)} |")
