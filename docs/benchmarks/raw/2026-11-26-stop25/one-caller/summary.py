#!/usr/bin/env python3
"""Per round and median: calls/s, average round trip, CPU per call, and round trip against the echo's (files t1-N.json or GLOB)."""
import json, glob, sys, statistics as st
files = sorted(glob.glob(sys.argv[1] if len(sys.argv) > 1 else 't1-*.json'))
rows = []
for f in files:
    m = {x['params']['framework']: x for x in json.load(open(f))}
    g = lambda fw, k: m[fw]['secondaryMetrics'][k]['score']
    pe = g('PETREL', 'rtt.avg') / g('NETTY', 'rtt.avg') if 'PETREL' in m else float('nan')
    de = g('PETREL_DIRECT', 'rtt.avg') / g('NETTY', 'rtt.avg')
    rows.append((pe, de))
    print(f, ' '.join(f"{fw}: {m[fw]['primaryMetric']['score']:.0f}/s rtt {g(fw,'rtt.avg'):.1f} us, server {g(fw,'server.cpu'):.1f} client {g(fw,'client.cpu'):.1f} us/call;" for fw in m), f'pool/echo {pe:.2f} direct/echo {de:.2f}')
print('median: pool/echo', round(st.median(r[0] for r in rows), 3), 'direct/echo', round(st.median(r[1] for r in rows), 3))
