import otf2, sys, collections
for a in sys.argv[1:]:
    tot = collections.Counter(); cnt = collections.Counter(); first=last=None
    with otf2.reader.open(a) as r:
        st = {}
        for loc, ev in r.events:
            t = ev.time
            first = t if first is None else min(first,t); last = t if last is None else max(last,t)
            k = type(ev).__name__
            if k == "Enter": st[ev.region.name] = t
            elif k == "Leave":
                n = ev.region.name
                if n in st: tot[n] += t - st.pop(n); cnt[n] += 1
    f = "zecoll buffer flush"
    print(a, "span %.1f ms" % ((last-first)/1e6), "flush regions", cnt[f], "total %.2f ms" % (tot[f]/1e6), "per MPI call %.1f ns" % (tot[f]/ (cnt["MPI_Irecv"]+cnt["MPI_Isend"]+cnt["MPI_Waitall"])))
