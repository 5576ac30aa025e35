#!/usr/bin/env python3
"""Per run: pool/echo, pool/gRPC, direct/echo, server CPU us/call (pool, direct); medians per jar."""
import glob, json, re, statistics, sys, os
d = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(d, '*-t*.json'))):
    m = re.match(r"([a-z]+)(\d+)-t(\d+)\.json", os.path.basename(f))
    tag, r, t = m.group(1), int(m.group(2)), m.group(3)
    try:
        data = json.load(open(f))
    except ValueError:
        continue
    score = {b['params']['framework']: b for b in data}
    if len(score) < 4:
        continue
    runs.setdefault((tag, t), []).append((r, score))
def sec(b, k):
    s = b['secondaryMetrics'].get(k)
    return s['score'] if s else float('nan')
for (tag, t), rs in sorted(runs.items()):
    rows = []
    for r, s in sorted(rs):
        P, D, G, N = (s[k] for k in ('PETREL', 'PETREL_DIRECT', 'GRPC', 'NETTY'))
        tp = lambda b: b['primaryMetric']['score']
        rows.append(dict(pe=tp(P)/tp(N), pg=tp(P)/tp(G), de=tp(D)/tp(N), pool=tp(P), echo=tp(N), grpc=tp(G), direct=tp(D),
                         cpup=sec(P, 'server.cpu'), cpud=sec(D, 'server.cpu'), rttp=sec(P, 'rtt.avg'), rttn=sec(N, 'rtt.avg'),
                         steal=max(sec(b, 'machine.steal') for b in (P, D, G, N))))
    print(f"== {tag} t={t} runs={len(rows)}")
    for k in ('pe', 'pg', 'de', 'pool', 'direct', 'echo', 'grpc', 'cpup', 'cpud', 'rttp', 'rttn', 'steal'):
        vals = [x[k] for x in rows]
        print(f"  {k:6s} median {statistics.median(vals):10.3f}   runs: " + ', '.join(f'{v:.3f}' for v in vals))
    cpugap = [x['cpup'] - x['cpud'] for x in rows]
    rttr = [x['rttp'] / x['rttn'] for x in rows]
    print(f"  cpu gap pool-direct median {statistics.median(cpugap):.2f}: " + ', '.join(f'{v:.2f}' for v in cpugap))
    print(f"  rtt pool/echo median {statistics.median(rttr):.3f}: " + ', '.join(f'{v:.3f}' for v in rttr))
