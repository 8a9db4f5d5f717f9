"""The longest stretch in which no kernel of a searched-together group timed anything, per group of an unseen-benchmark result (its
kernels' trajectories share the group's clock), with the kernel whose reference was slowest in that group.
  python results/logs/verify/group_gaps.py results/unseen_s29.json > results/logs/verify/group_gaps_s29.txt"""
import json, sys
res = json.load(open(sys.argv[1]))
groups: dict[float, list[dict]] = {}
for e in res["kernels"]: groups.setdefault(e["together_wall_s"], []).append(e)
print(f"{sys.argv[1]}: {len(groups)} groups, learned wall {sum(groups):.1f} s")
for wall, ks in groups.items():
  ts = sorted(t for e in ks for _, t, _ in e["trajectory"])
  gap, at = max(((b - a, a) for a, b in zip(ts, ts[1:])), default=(0.0, 0.0))
  slow = max(ks, key=lambda e: e["phases"]["reference_s"])
  print(f"group wall {wall:6.1f} s, {len(ks):2d} kernels: longest stretch with nothing timed {gap:5.1f} s from {at:.1f} s; slowest reference "
        f"{slow['phases']['reference_s']:.1f} s ({slow['name']})")
