import json,sys,glob,re,statistics
from collections import defaultdict
rows=defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] if len(sys.argv)>1 else '/tmp/bench/r/*.json')):
    try: data=json.load(open(f))
    except Exception as e: continue
    for b in data:
        fw=b['params'].get('framework'); t=b['threads']
        sec=b.get('secondaryMetrics',{})
        g=lambda k: sec.get(k,{}).get('score',float('nan'))
        rows[f][fw]=(b['primaryMetric']['score'],g('rtt.avg'),g('server.cpu'),g('client.cpu'),g('machine.steal'))
agg=defaultdict(list)
for f,d in rows.items():
    if 'PETREL_DIRECT' in d and 'NETTY' in d:
        p,n=d['PETREL_DIRECT'],d['NETTY']
        m=re.search(r'ab-(\w+)-(\d+)-t(\d+)',f)
        key=(m.group(1),m.group(3)) if m else (f,'')
        ratio = p[0]/n[0] if key[1]!='1' else p[1]/n[1]
        agg[key].append(ratio)
        print(f"{f.split('/')[-1]:28s} P {p[0]:9.0f} rtt {p[1]:7.1f} scpu {p[2]:5.1f} ccpu {p[3]:5.1f} | N {n[0]:9.0f} rtt {n[1]:7.1f} scpu {n[2]:5.1f} ccpu {n[3]:5.1f} | ratio {ratio:.3f} steal {max(p[4],n[4]):.1f}")
for k,v in sorted(agg.items()):
    print(k, ' '.join(f'{x:.3f}' for x in v), 'median', f'{statistics.median(v):.3f}')
