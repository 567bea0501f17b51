# Medians of the interleaved ROART runs (docs/results/roart_bench.sh): roart_summary.py [DIR]
import sys, json, glob, statistics, collections
rows = collections.defaultdict(list)
space = {}
for f in sorted(glob.glob((sys.argv[1] if len(sys.argv) > 1 else '/tmp/roart_bench') + '/*.json')):
    ds = f.split('/')[-1].split('-')[0]
    for r in json.load(open(f))['results']:
        key = (ds, r['workload'], r['index'])
        rows[key].append((r['run']['mops'], r['run'].get('mops_cpu', 0), r['run']['latency_ns']['p50']))
        if r['workload'] == 'read100':
            space[(ds, r['index'])] = (r['space']['pm_bytes_per_record'], r['load']['mops'], r['space'].get('leaf_array_fill'))
print("%-5s %-9s %-8s %5s %10s %10s %8s" % ('data', 'workload', 'index', 'reps', 'Mops/s', 'Mops/cpu-s', 'p50 ns'))
for key in sorted(rows):
    v = rows[key]
    print("%-5s %-9s %-8s %5d %10.3f %10.3f %8d" % (key[0], key[1], key[2], len(v), statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))
print()
for k in sorted(space):
    print(k, "PM B/record %.1f, load Mops %.3f, leaf_array_fill %s" % space[k])
