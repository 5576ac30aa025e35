#!/usr/bin/env python3
# alloc.py COLLAPSED: async-profiler's alloc samples (collapsed) by allocated class and the nearest Petrel or
# protobuf frame above it, as shares of all sampled bytes.
import sys, collections
tot = 0
by = collections.Counter()
for line in open(sys.argv[1]):
    st, _, n = line.rstrip().rpartition(' ')
    n = int(n); tot += n
    fs = st.split(';')
    site = next((f for f in reversed(fs[:-1]) if 'io/petrel' in f or 'protobuf' in f), None)
    by[(fs[-1], site)] += n
print("samples", tot)
for (cls, site), v in by.most_common(30):
    print(f"{v * 100 / tot:5.1f}% {cls}  @ {site}")
