# Medians over the rounds of scale-java.sh: python3 medians.py [DIR] (DIR holds round-N/ or scale-java-rN/; default /tmp)
import json,glob,statistics as st,sys,os
base=sys.argv[1] if len(sys.argv)>1 else '/tmp'
rows={}
for r in sorted(glob.glob(base+'/scale-java-r*')+glob.glob(base+'/round-*')):
    for f in sorted(glob.glob(r+'/java-*.json')):
        try:
            d=json.load(open(f))
        except Exception:
            continue
        jv=None; fw={}
        for b in d:
            jv=b['jdkVersion']+' '+b.get('vmName','')+' '+b.get('vmVersion','')
            fw[b['params']['framework']]=b['primaryMetric']['score']
        rows.setdefault(os.path.basename(f)+' '+jv,[]).append(fw)
for k,runs in rows.items():
    med=lambda x: st.median(x)
    P=med([r['PETREL'] for r in runs]); D=med([r['PETREL_DIRECT'] for r in runs]); G=med([r['GRPC'] for r in runs]); N=med([r['NETTY'] for r in runs])
    pe=med([r['PETREL']/r['NETTY'] for r in runs]); de=med([r['PETREL_DIRECT']/r['NETTY'] for r in runs]); pg=med([r['PETREL']/r['GRPC'] for r in runs])
    print(k, len(runs), f"| {P:,.0f} | {D:,.0f} | {G:,.0f} | {N:,.0f} | {pe:.2f} | {de:.2f} | {pg:.2f} |")
    for r in runs: print('   ', {a:round(b) for a,b in r.items()})
