# summary.py: per round and jar, Petrel pool and direct at 16 callers and pool at 1 caller (calls/s, server and
# client CPU per call, failed calls), pool / direct within each trial set, and the medians per jar
import json,glob,re,statistics as st,collections
rows=collections.defaultdict(dict)
for f in sorted(glob.glob('*-t*.json')):
    m=re.match(r'(\w+?)(\d+)-t(\d+)\.json',f); tag,r,t=m.group(1),int(m.group(2)),int(m.group(3))
    try: data=json.load(open(f))
    except ValueError: continue
    for x in data:
        sm=x['secondaryMetrics']; g=lambda k: sm[k]['score'] if k in sm else float('nan')
        rows[(tag,r)][(t,x['params']['framework'])]=(x['primaryMetric']['score'],g('server.cpu'),g('client.cpu'),g('calls.failed'),g('rtt.avg'))
med=collections.defaultdict(lambda: collections.defaultdict(list))
for (tag,r),d in sorted(rows.items(),key=lambda k:(k[0][1],k[0][0])):
    p=d.get((16,'PETREL')); dd=d.get((16,'PETREL_DIRECT')); p1=d.get((1,'PETREL'))
    line=f'round {r} {tag:7s}'
    if p and dd:
        line+=f' t16 pool {p[0]:8.0f} (srv {p[1]:.1f} cli {p[2]:.1f} failed {p[3]:.0f}) direct {dd[0]:8.0f} (srv {dd[1]:.1f}) pool/direct {p[0]/dd[0]:.3f}'
        for k,v in [('pool16',p[0]),('srv16',p[1]),('pd16',p[0]/dd[0]),('srvdiff16',p[1]-dd[1])]: med[tag][k].append(v)
    if p1:
        line+=f' | t1 pool {p1[0]:7.0f} (srv {p1[1]:.1f} us, rtt {p1[4]:.1f} us, failed {p1[3]:.0f})'
        for k,v in [('pool1',p1[0]),('srv1',p1[1]),('rtt1',p1[4])]: med[tag][k].append(v)
    print(line)
for tag,d in med.items():
    print(tag, ' '.join(f'{k}={st.median(v):.3f}' for k,v in d.items()))
