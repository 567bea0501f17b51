#!/usr/bin/env python3
"""Tables of matrix.sh's results: per dataset and thread count, one row per
index: load (prefill insert) Mops, read100 / scan100 / insert Mops, PM and
DRAM bytes per record, flushes and fences per insert (of the load).
Prints markdown; writes OUTDIR/matrix.json (the numbers the tables show)."""
import glob, json, sys

out = sys.argv[1]
rows = []
for f in sorted(glob.glob(out + '/*-t*.json')):
    for r in json.load(open(f))['results']:
        rows.append(r)
table = {}
for r in rows:
    key = (r['dataset'], r['threads'], r['index'])
    e = table.setdefault(key, {'dataset': r['dataset'], 'threads': r['threads'], 'index': r['index'],
                               'mode': r['mode']})
    if 'load' in r and r['load'].get('records'):
        e['load_mops'] = r['load']['mops']
        e['flushes_per_insert'] = r['load']['flushes_per_insert']
        e['fences_per_insert'] = r['load']['fences_per_insert']
    if 'space' in r and 'pm_bytes_per_record' not in e:
        e['pm_bytes_per_record'] = r['space'].get('pm_bytes_per_record', 0)
        e['bytes_per_record'] = r['space'].get('bytes_per_record', 0)
    name = {'read=1': 'read_mops', 'scan=1:100': 'scan100_mops', 'insert=1': 'insert_mops'}[r['workload']]
    e[name] = r['run']['mops']
    e.setdefault('check', True)
    e['check'] = e['check'] and r['check']['ok']
json.dump(list(table.values()), open(out + '/matrix.json', 'w'), indent=1)

def f(e, k, fmt='{:.2f}'):
    return fmt.format(e[k]) if k in e else '-'

last = None
for key in sorted(table, key=lambda k: (['u64', 'u64-bytes', 'names', 'wiki', 'urls', 'words'].index(k[0])
                                          if k[0] in ['u64', 'u64-bytes', 'names', 'wiki', 'urls', 'words'] else 9,
                                          k[1])):
    e = table[key]
    if (e['dataset'], e['threads']) != last:
        last = (e['dataset'], e['threads'])
        print(f"\n**{e['dataset']}, {e['threads']} thread{'s' if e['threads'] > 1 else ''}**\n")
        print('| index | mode | load Mops | read Mops | scan100 Mops | insert Mops | PM B/rec | all B/rec | flush/ins | fence/ins | check |')
        print('|---|---|---|---|---|---|---|---|---|---|---|')
    print(f"| {e['index']} | {e['mode']} | {f(e,'load_mops')} | {f(e,'read_mops')} | {f(e,'scan100_mops','{:.3f}')} | "
          f"{f(e,'insert_mops')} | {f(e,'pm_bytes_per_record','{:.0f}')} | {f(e,'bytes_per_record','{:.0f}')} | "
          f"{f(e,'flushes_per_insert')} | {f(e,'fences_per_insert')} | {'ok' if e['check'] else 'FAIL'} |")
