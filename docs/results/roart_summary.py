# Medians of interleaved runs (docs/results/roart_bench.sh, pactree_bench.sh): roart_summary.py [DIR]
# Files are [TAG]DATASET-INDEX[-tT]-REP.json; rows by (tag+dataset, threads, workload, index).
import sys, json, glob, statistics, collections
rows = collections.defaultdict(list)
space = {}
for f in sorted(glob.glob((sys.argv[1] if len(sys.argv) > 1 else '/tmp/roart_bench') + '/*.json')):
    stem = f.split('/')[-1]
    ds = stem.split('-')[0] if not stem.startswith('ss-') else 'ss-' + stem.split('-')[1]
    for r in json.load(open(f))['results']:
        key = (ds, r.get('threads', 1), r['workload'], r['index'])
        rows[key].append((r['run']['mops'], r['run'].get('mops_cpu', 0), r['run']['latency_ns']['p50']))
        sp = r['space']
        space[(ds, r['index'])] = (sp['pm_bytes_per_record'], r['load']['mops'],
                                   sp.get('leaf_array_fill', sp.get('node_fill')),
                                   sp.get('layer_dram_bytes', sp.get('inner_dram_bytes', 0)) / max(sp['records'], 1))
print("%-9s %2s %-22s %-8s %4s %8s %10s %8s" % ('data', 't', 'workload', 'index', 'reps', 'Mops/s', 'Mops/cpu-s', 'p50 ns'))
for key in sorted(rows):
    v = rows[key]
    print("%-9s %2d %-22s %-8s %4d %8.3f %10.3f %8d" % (key[0], key[1], key[2], key[3], len(v), statistics.median(x[0] for x in v),
                                                 statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))
print()
for k in sorted(space):
    print(k, "PM B/record %.1f, load Mops %.3f, fill %s, search-layer DRAM B/record %.2f" % space[k])
