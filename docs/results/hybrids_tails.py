#!/usr/bin/env python3
"""Insert latency (p50, p99, p99.9) medians per index and thread count from a
   roart_bench.sh / pactree_bench.sh output directory: python3 docs/results/hybrids_tails.py DIR"""
import json,glob,statistics as st,collections,sys
d=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.json'):
    n=f.split('/')[-1][:-5]
    tag='ss' if n.startswith('ss-') else 'u'
    for r in json.load(open(f))['results']:
        if r['workload']!='insert=1': continue
        L=r['run']['latency_ns']
        d[(tag,r['index'],r['threads'])].append((L['p50'],L['p99'],L['p99.9']))
print('| keys | index | threads | insert p50 ns | p99 ns | p99.9 ns |')
print('|---|---|---|---|---|---|')
for k in sorted(d):
    v=d[k]; print('| %s | %s | %d | %d | %d | %d |'%(('self-similar' if k[0]=='ss' else 'uniform'),k[1],k[2],*[st.median(x[i] for x in v) for i in range(3)]))
