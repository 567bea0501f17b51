#!/usr/bin/env python3
"""Collects the measure.sh output directory into docs/results/permart.json."""
import json, re, sys, glob, os

out_dir, dest = sys.argv[1], sys.argv[2]
res = {"source": "docs/results/permart/measure.sh", "runs": {}}
for f in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
    name = os.path.basename(f)[:-5]
    d = json.load(open(f))
    r = d["results"][0]
    run, load, space = r["run"], r["load"], r["space"]
    e = {
        "workload": r["workload_spec"], "mode": r["mode"], "threads": r["threads"],
        "mops": run["mops"], "mops_per_cpu_second": run["mops_cpu"],
        "cpu_seconds_per_thread": run["cpu_seconds"], "wall_seconds": run["wall_seconds"],
        "flushes_per_op": run["flushes_per_op"], "fences_per_op": run["fences_per_op"],
        "p50_ns": run["latency_ns"]["p50"], "p99_ns": run["latency_ns"]["p99"],
        "load_mops": load["mops"], "flushes_per_insert": load["flushes_per_insert"],
        "fences_per_insert": load["fences_per_insert"],
        "pm_bytes_per_record": space.get("pm_bytes_per_record"), "records": space.get("records"),
        "nodes": {k: space.get(k) for k in ("leaves", "sparse_nodes", "indirect_nodes", "full_nodes")},
        "ops": {o["op"] if "op" in o else k: o for k, o in (r["ops"].items() if isinstance(r["ops"], dict) else enumerate(r["ops"]))},
    }
    txt = open(os.path.join(out_dir, name + ".txt")).read()
    m = re.search(r"clean reopen ([\d.]+) s; after a crash reopen ([\d.]+) s \(repair \+ tracing ([\d.]+) s, (\d+) blocks\)", txt)
    if m:
        e["recovery"] = {"clean_reopen_s": float(m[1]), "dirty_reopen_s": float(m[2]),
                         "repair_and_tracing_s": float(m[3]), "traced_blocks": int(m[4])}
    res["context"] = d.get("context")
    res["runs"][name] = e
json.dump(res, open(dest, "w"), indent=1)
print("wrote", dest, len(res["runs"]), "runs")
