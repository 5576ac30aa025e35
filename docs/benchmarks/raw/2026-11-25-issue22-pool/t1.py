#!/usr/bin/env python3
"""One caller: Petrel pool's and direct's average round trip over the raw Netty echo's, per run; medians per jar."""
import glob, json, re, statistics, sys, os
d = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(d, '*-t1.json'))):
    tag, r = re.match(r'([a-z]+)(\d+)-t1\.json', os.path.basename(f)).groups()
    try:
        data = json.load(open(f))
    except ValueError:
        continue
    s = {b['params']['framework']: b for b in data}
    if len(s) < 3:
        continue
    rtt = lambda k: s[k]['secondaryMetrics']['rtt.avg']['score']
    cpu = lambda k: s[k]['secondaryMetrics']['server.cpu']['score']
    runs.setdefault(tag, []).append((rtt('PETREL') / rtt('NETTY'), rtt('PETREL_DIRECT') / rtt('NETTY'),
                                     rtt('PETREL'), rtt('NETTY'), cpu('PETREL'), cpu('PETREL_DIRECT')))
for tag, rs in sorted(runs.items()):
    print(f"== {tag} runs={len(rs)}")
    for i, name in enumerate(('rtt pool/echo', 'rtt direct/echo', 'rtt pool us', 'rtt echo us', 'cpu pool', 'cpu direct')):
        v = [x[i] for x in rs]
        print(f"  {name:16s} median {statistics.median(v):8.3f}   runs: " + ', '.join(f'{x:.3f}' for x in v))
