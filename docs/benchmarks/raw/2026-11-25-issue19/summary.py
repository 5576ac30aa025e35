#!/usr/bin/env python3
"""Per run: Petrel direct / raw Netty echo and Petrel pool / gRPC-java at 16 callers; medians per jar."""
import glob, json, re, statistics, sys, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
runs = {}
for f in sorted(glob.glob('*-t16.json')):
    m = re.match(r'([a-z]+)(\d+)-t16\.json', f)
    tag, r = m.group(1), int(m.group(2))
    try:
        data = json.load(open(f))
    except ValueError:
        continue  # a run still in progress
    score = {b['params']['framework']: b['primaryMetric']['score'] for b in data}
    if len(score) < 4:
        continue
    runs.setdefault(tag, []).append((r, score))
for tag, rs in runs.items():
    de = [s['PETREL_DIRECT'] / s['NETTY'] for _, s in sorted(rs)]
    pg = [s['PETREL'] / s['GRPC'] for _, s in sorted(rs)]
    print(f"{tag}: direct/echo {', '.join(f'{x:.3f}' for x in de)}; median {statistics.median(de):.3f}")
    print(f"{tag}: pool/gRPC   {', '.join(f'{x:.3f}' for x in pg)}; median {statistics.median(pg):.3f}")
    for r, s in sorted(rs):
        print(f"  {tag}{r}: " + ', '.join(f"{k} {v/1000:.1f}k" for k, v in sorted(s.items())))
