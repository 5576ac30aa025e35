#!/usr/bin/env python3
"""Ratios of the eighth round from the JMH JSON beside this script: per jar (tag) and round, each within one run."""
import glob, json, os, re, statistics, sys
from collections import defaultdict
here = os.path.dirname(os.path.abspath(__file__))
res = defaultdict(dict)  # (tag, round, threads) -> framework -> metrics
for f in glob.glob(os.path.join(here, '*.json')):
    m = re.match(r'(\w+?)(\d+)-t(\d+)\.json$', os.path.basename(f))
    if not m:
        continue
    try:
        data = json.load(open(f))
    except ValueError:
        continue  # a run still writing
    for b in data:
        sec = b.get('secondaryMetrics', {})
        g = lambda k: sec.get(k, {}).get('score', float('nan'))
        res[(m.group(1), int(m.group(2)), int(m.group(3)))][b['params']['framework']] = dict(
            tps=b['primaryMetric']['score'], rtt=g('rtt.avg'), p99=g('rtt.p99'), scpu=g('server.cpu'),
            ccpu=g('client.cpu'), steal=g('machine.steal'))
goals = [('direct / echo, 16 callers (TPS)', 16, 'PETREL_DIRECT', 'NETTY', 'tps', '>= 0.72'),
         ('direct / echo, 128 callers (TPS)', 128, 'PETREL_DIRECT', 'NETTY', 'tps', '>= 0.72'),
         ('pool / gRPC-java default, 16 callers (TPS)', 16, 'PETREL', 'GRPC', 'tps', '>= 3.5'),
         ('1 caller: direct round trip / echo round trip', 1, 'PETREL_DIRECT', 'NETTY', 'rtt', '<= 1.2')]
tags = sorted({k[0] for k in res}, reverse=True)
for name, t, a, b, metric, goal in goals:
    print(f'## {name}  goal {goal}')
    for tag in tags:
        vals = []
        for r in sorted({k[1] for k in res if k[0] == tag}):
            d = res.get((tag, r, t), {})
            if a in d and b in d:
                vals.append(d[a][metric] / d[b][metric])
        if vals:
            print(f'  {tag:7s} runs {", ".join(f"{v:.3f}" for v in vals)}  median {statistics.median(vals):.3f}')
print('## per run: calls/s (thousands) and CPU per call (us, server / client)')
for key in sorted(res, key=lambda k: (k[2], k[0], k[1])):
    d = res[key]
    cells = '  '.join(f'{fw} {v["tps"]/1000:.1f}k rtt {v["rtt"]:.0f} cpu {v["scpu"]:.1f}/{v["ccpu"]:.1f}'
                      for fw, v in sorted(d.items()))
    steal = max(v['steal'] for v in d.values())
    print(f'  t{key[2]:<3d} {key[0]:6s} {key[1]}  {cells}  steal {steal:.1f}%')
