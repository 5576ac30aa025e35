#!/usr/bin/env python3
"""Per payload and framework: calls/s and server/client CPU per call of each round, before and after."""
import glob, json, os, re, statistics
os.chdir(os.path.dirname(os.path.abspath(__file__)))
rows = {}
for f in sorted(glob.glob('*.json')):
    m = re.match(r'([a-z]+)(\d+)\.json', f)
    try:
        data = json.load(open(f))
    except ValueError:
        continue  # a run still in progress
    for b in data:
        key = (b['params']['payload'], b['params']['framework'])
        sec = b['secondaryMetrics']
        rows.setdefault(key, {}).setdefault(m.group(1), []).append(
            (b['primaryMetric']['score'], sec['server.cpu']['score'], sec['client.cpu']['score']))
order = ['BYTES_16K', 'BYTES_64K', 'BYTES_256K', 'BYTES_1M']
print('| body | framework | calls/s before | calls/s after | after / before | server us/call before -> after | client us/call before -> after |')
print('|---|---|---|---|---:|---|---|')
for (payload, fw), tags in sorted(rows.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
    b, a = tags.get('before', []), tags.get('after', [])
    if not b or not a:
        continue
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    print(f"| {payload} | {fw} | {', '.join(f'{x[0]:,.0f}' for x in b)} | {', '.join(f'{x[0]:,.0f}' for x in a)} | "
          f"{med(a, 0) / med(b, 0):.2f} | {med(b, 1):.0f} -> {med(a, 1):.0f} | {med(b, 2):.0f} -> {med(a, 2):.0f} |")
