import glob, json, re, statistics, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
res = {}
for f in sorted(glob.glob('*.json')):
    m = re.match(r'(before|c32|c256)(\d+)\.json', f)
    try: data = json.load(open(f))
    except ValueError: continue
    sc = {b['params']['framework']: b['primaryMetric']['score'] for b in data}
    if len(sc) < 2: continue
    res.setdefault(m.group(1), []).append(sc)
for t, rs in res.items():
    print(t, ' '.join(f"PETREL {r['PETREL']/1000:.1f}k GRPC {r['GRPC']/1000:.1f}k ratio {r['PETREL']/r['GRPC']:.2f};" for r in rs))
