import sys, statistics as st, collections, math
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3: d[int(f[0])][f[1]] = float(f[2])
def ratio(a, b):
    r = [x[b] / x[a] for x in d.values() if a in x and b in x]
    m = st.mean(r); se = st.stdev(r) / math.sqrt(len(r)) if len(r) > 1 else float('nan')
    return f"{b}/{a}: x{m:.4f} ± {se:.4f} (n={len(r)}, median x{st.median(r):.4f})"
for a, b in (("base", "with"), ("base", "tick"), ("with", "tick"), ("with", "tick1s"), ("base", "tick1s")):
    print(ratio(a, b))
