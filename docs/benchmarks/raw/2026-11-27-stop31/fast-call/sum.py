import json,glob,re,statistics,collections
r=collections.defaultdict(dict)
for f in sorted(glob.glob('*.json')):
    m=re.match(r'(base|f0a2|f0|echo)(\d+)\.json',f)
    try: d=json.load(open(f))
    except Exception: continue
    for b in d:
        r[int(m.group(2))][m.group(1)]=(b['primaryMetric']['score'], b.get('secondaryMetrics',{}).get('server.cpu',{}).get('score'), b.get('secondaryMetrics',{}).get('client.cpu',{}).get('score'))
ratios=collections.defaultdict(list)
for k,v in sorted(r.items()):
    print(k, {t:(round(x[0]/1000,1), x[1] and round(x[1],1), x[2] and round(x[2],1)) for t,x in v.items()})
    if 'echo' in v:
        for t in v:
            if t!='echo': ratios[t].append(v[t][0]/v['echo'][0])
for t,xs in ratios.items(): print(t, [round(x,3) for x in xs], 'median', round(statistics.median(xs),3))
