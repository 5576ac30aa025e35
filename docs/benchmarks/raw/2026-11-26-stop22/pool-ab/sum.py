import glob,json,re,statistics,sys,collections
runs=collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] if len(sys.argv)>1 else '*.json')):
    m=re.search(r'([a-z]+)(\d+)-t(\d+)\.json$',f)
    try: data=json.load(open(f))
    except ValueError: continue
    s={b['params']['framework']:(b['primaryMetric']['score'], b['secondaryMetrics'].get('server.cpu',{}).get('score'), b['secondaryMetrics'].get('client.cpu',{}).get('score'), b['secondaryMetrics'].get('rtt.avg',{}).get('score')) for b in data}
    runs[(m.group(1),m.group(3))][int(m.group(2))]=s
for (tag,t),rs in sorted(runs.items()):
    for r,s in sorted(rs.items()):
        print(tag,r,'t'+t,'  '.join(f"{k} {v[0]/1000:.1f}k srv {v[1] or 0:.1f} cli {v[2] or 0:.1f} rtt {v[3] or 0:.0f}" for k,v in sorted(s.items())))
    for a,b in [('PETREL','NETTY'),('PETREL_DIRECT','NETTY'),('PETREL','GRPC')]:
        xs=[s[a][0]/s[b][0] for s in rs.values() if a in s and b in s]
        if xs: print(f"   {tag} t{t} {a}/{b}: {' '.join(f'{x:.3f}' for x in xs)} median {statistics.median(xs):.3f}")
