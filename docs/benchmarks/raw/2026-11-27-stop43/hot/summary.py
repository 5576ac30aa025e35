#!/usr/bin/env python3
"""Per run and jar: the goal ratios of issues 20 and 22 (each within one run), medians per jar."""
import glob, json, re, statistics, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
runs = {}
for f in sorted(glob.glob('*-t*.json')):
    m = re.match(r'([a-z0-9]+?)(\d+)-t(\d+)\.json', f)
    tag, r, t = m.group(1), int(m.group(2)), int(m.group(3))
    try:
        data = json.load(open(f))
    except ValueError:
        continue  # a run still in progress
    score = {b['params']['framework']: b['primaryMetric']['score'] for b in data}
    runs.setdefault((tag, t), {})[r] = score
ratios = [('direct/echo', 'PETREL_DIRECT', 'NETTY'), ('pool/echo', 'PETREL', 'NETTY'), ('pool/gRPC', 'PETREL', 'GRPC')]
for (tag, t), rs in sorted(runs.items()):
    for name, a, b in ratios:
        xs = [s[a] / s[b] for _, s in sorted(rs.items()) if a in s and b in s]
        if xs:
            print(f"{tag} t{t}: {name:12s} {', '.join(f'{x:.3f}' for x in xs)}; median {statistics.median(xs):.3f}")
    for r, s in sorted(rs.items()):
        print(f"  {tag}{r} t{t}: " + ', '.join(f"{k} {v/1000:.1f}k" for k, v in sorted(s.items())))
