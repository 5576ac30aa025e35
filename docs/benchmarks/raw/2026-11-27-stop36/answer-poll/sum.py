import json,glob,re,statistics,collections
res=collections.defaultdict(list)
for f in sorted(glob.glob('/tmp/ab/p*-*.json')):
    m=re.match(r'.*/p(\d+)-(\d+)\.json',f)
    try: d=json.load(open(f))
    except Exception: continue
    for r in d:
        s=r['secondaryMetrics']
        res[m.group(1)].append((int(m.group(2)), r['primaryMetric']['score'], s['server.cpu']['score'], s['client.cpu']['score'], s['machine.steal']['score']))
for k,v in sorted(res.items()):
    print(k, ' '.join(f"r{r}:{t/1000:.1f}k srv{sc:.1f} cli{cc:.1f} st{st:.1f}" for r,t,sc,cc,st in sorted(v)), 'median', f"{statistics.median(x[1] for x in v)/1000:.1f}k")
