import re, sys
# Calls to memcmp/bcmp whose caller chain (callgrind --separate-callers) has a byte lookup.
names = {}
total = 0
cur = None
for line in open(sys.argv[1], errors='replace'):
    line = line.rstrip('\n')
    if line.startswith('cfn=') or line.startswith('fn='):
        m = re.match(r'^c?fn=\((\d+)\)(?: (.*))?$', line)
        if m.group(2): names[m.group(1)] = m.group(2)
        if line.startswith('cfn='): cur = names.get(m.group(1), '')
        continue
    if line.startswith('calls=') and cur is not None:
        first = cur.split("'")[0]
        if ('memcmp' in first or 'bcmp' in first) and 'lookup(std::basic_string_view' in cur:
            total += int(line.split('=')[1].split()[0])
        cur = None
print(total)
