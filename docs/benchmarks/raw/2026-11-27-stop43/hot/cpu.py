import glob,json,re,statistics,collections,os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
cpu=collections.defaultdict(list)
for f in sorted(glob.glob('*-t*.json')):
    m=re.match(r'([a-z]+)(\d+)-t(\d+)\.json$',f)
    try: data=json.load(open(f))
    except ValueError: continue
    for b in data:
        fw=b['params']['framework']; sm=b['secondaryMetrics']
        for k in ('client.cpu','server.cpu'):
            if k in sm: cpu[(m.group(1),m.group(3),fw,k)].append(sm[k]['score'])
for k,v in sorted(cpu.items()):
    print(f"{k[0]:7s} t{k[1]:4s} {k[2]:14s} {k[3]:11s} median {statistics.median(v):5.1f}  ({', '.join(f'{x:.1f}' for x in v)})")
