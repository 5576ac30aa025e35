# quick.py FILE...: per run, TPS and CPU per call of each framework, and the goal ratios
import json,sys
for f in sys.argv[1:]:
    rs=json.load(open(f)); by={}
    for r in rs:
        sm=r['secondaryMetrics']; g=lambda k: sm[k]['score'] if k in sm else float('nan')
        by[(r['threads'],r['params']['framework'])]=(r['primaryMetric']['score'],g('server.cpu'),g('client.cpu'),g('rtt.avg'))
    for t in sorted({k[0] for k in by}):
        P=by.get((t,'PETREL')); D=by.get((t,'PETREL_DIRECT')); G=by.get((t,'GRPC')); N=by.get((t,'NETTY'))
        if not (P and D and N): continue
        print(f"{f} t{t}: pool {P[0]:.0f} direct {D[0]:.0f} grpc {G[0] if G else 0:.0f} echo {N[0]:.0f} | pool/echo {P[0]/N[0]:.3f} direct/echo {D[0]/N[0]:.3f} pool/grpc {P[0]/G[0] if G else 0:.2f} | rtt pool/echo {P[3]/N[3]:.2f} direct/echo {D[3]/N[3]:.2f} | srv cpu pool-direct {P[1]-D[1]:.1f} (pool {P[1]:.1f} direct {D[1]:.1f} echo {N[1]:.1f}) cli {P[2]:.1f}/{D[2]:.1f}/{N[2]:.1f}")
