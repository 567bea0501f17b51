# Tables for docs/results/wort.md from the JSON of wort_bench.sh:
#   python3 docs/results/wort_summarize.py docs/results/wort.json [RAW_DIR]
import json, glob, os, sys
O = sys.argv[2] if len(sys.argv) > 2 else '/tmp/wort-bench'
out = {"command": "see docs/results/wort.md", "records": 1048576, "threads": 1, "runs": {}}
rows = []
for u in ['dense', 'sparse', 'clustered']:
    for tag in ['read', 'scan10', 'scan100', 'read-w300']:
        f = f'{O}/{u}-{tag}.json'
        if not os.path.exists(f): continue
        d = json.load(open(f))
        out.setdefault('context', d['context'])
        for r in d['results']:
            key = f"{r['index']}/{u}/{tag}"
            run = r['run']; load = r['load']; sp = r['space']
            e = {
                "index": r['index'], "universe": u, "workload": tag,
                "insert_ns_wall": 1e3 / load['mops'] if load['mops'] else None,
                "flushes_per_insert": load['flushes_per_insert'], "fences_per_insert": load['fences_per_insert'],
                "op_ns_wall": 1e3 / run['mops'] if run['mops'] else None,
                "op_ns_cpu": 1e3 / run['mops_cpu'] if run.get('mops_cpu') else None,
                "p50_ns": run['latency_ns']['p50'], "p99_ns": run['latency_ns']['p99'],
                "leaf_depth_avg": sp.get('leaf_depth_avg'), "bytes_per_record": sp['bytes_per_record'],
                "check_ok": r['check']['ok'],
            }
            out['runs'][key] = e
            rows.append(e)
json.dump(out, open(sys.argv[1], 'w'), indent=1)
def fmt(x, p=0):
    return '-' if x is None else (f'{x:.{p}f}')
for tag, title in [('read', 'insert (load) and point search, --pm-write-ns 0'), ('read-w300', 'insert and point search, --pm-write-ns 300'), ('scan10', 'range query of 10 keys (0.001%)'), ('scan100', 'range query of 100 keys (0.01%)')]:
    print(f'\n### {title}\n')
    if tag.startswith('read'):
        print('| index | keys | insert ns (wall) | flush/insert | fence/insert | search ns (CPU) | search p50 ns | leaf depth | B/record |')
        print('|---|---|---|---|---|---|---|---|---|')
        for e in rows:
            if e['workload'] != tag: continue
            print(f"| {e['index']} | {e['universe']} | {fmt(e['insert_ns_wall'])} | {fmt(e['flushes_per_insert'],2)} | {fmt(e['fences_per_insert'],2)} | {fmt(e['op_ns_cpu'])} | {fmt(e['p50_ns'])} | {fmt(e['leaf_depth_avg'],2)} | {fmt(e['bytes_per_record'],1)} |")
    else:
        print('| index | keys | scan ns (CPU) | scan p50 ns |')
        print('|---|---|---|---|')
        for e in rows:
            if e['workload'] != tag: continue
            print(f"| {e['index']} | {e['universe']} | {fmt(e['op_ns_cpu'])} | {fmt(e['p50_ns'])} |")
