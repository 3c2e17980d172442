"""Pooled win rate of LABEL over several tournament DBs, with a 95% t interval over duplicate
units (a deal's two seatings), and the paired difference of two sets."""
import math, sqlite3, sys
def units(dbs, label):
    out = {}
    for i, db in enumerate(dbs):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            for d, s, w, a, b in c.execute("SELECT deal, seating, winner, agent_a, agent_b FROM games"):
                if label in (a, b):
                    out.setdefault((i, d), []).append(int(w == label))
    return out
def ci(vals):
    n = len(vals); m = sum(vals) / n
    var = sum((x - m) ** 2 for x in vals) / (n - 1)
    return m, 1.96 * math.sqrt(var / n), n
a = sys.argv[1].split(","); b = sys.argv[2].split(",") if len(sys.argv) > 2 else None
ua = units(a, "S")
m, h, n = ci([sum(v) / len(v) for v in ua.values()])
print(f"A: {100*m:.1f}% [{100*(m-h):.1f}, {100*(m+h):.1f}] over {sum(map(len, ua.values()))} games")
if b:
    ub = units(b, "S")
    keys = sorted(set(ua) & set(ub))
    d = [sum(ua[k]) / len(ua[k]) - sum(ub[k]) / len(ub[k]) for k in keys]
    m, h, n = ci(d)
    mb, hb, _ = ci([sum(v) / len(v) for v in ub.values()])
    print(f"B: {100*mb:.1f}% [{100*(mb-hb):.1f}, {100*(mb+hb):.1f}]")
    print(f"A - B: {100*m:+.1f}% [{100*(m-h):+.1f}, {100*(m+h):+.1f}] over {2*len(keys)} paired games")
