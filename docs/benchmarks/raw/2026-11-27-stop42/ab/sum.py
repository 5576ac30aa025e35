import json, glob, statistics, re
rows = {}
for f in sorted(glob.glob('*.json')):
    m = re.match(r'(before|after)(\d+)\.json', f)
    if not m: continue
    tag, r = m.group(1), int(m.group(2))
    try:
        data = json.load(open(f))
    except ValueError:
        continue
    for b in data:
        fw = b['params']['framework']
        rows.setdefault(tag, {}).setdefault(fw, {})[r] = b['primaryMetric']['score']
for tag in ('before', 'after'):
    if tag not in rows: continue
    out = []
    for fw in ('PETREL', 'PETREL_DIRECT', 'NETTY'):
        v = rows[tag].get(fw, {})
        out.append('%s %s med %.0f' % (fw, ','.join('%.0f' % v[k] for k in sorted(v)), statistics.median(v.values()) if v else 0))
    ratios = []
    for r in sorted(rows[tag].get('NETTY', {})):
        e = rows[tag]['NETTY'][r]
        ratios.append('r%d pool/echo %.3f direct/echo %.3f' % (r, rows[tag]['PETREL'][r] / e, rows[tag]['PETREL_DIRECT'][r] / e))
    print(tag, '|', ' | '.join(out))
    print('   ', '; '.join(ratios))
