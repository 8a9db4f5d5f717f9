"""Where a searched-together group's wall goes in the first learned run of each unseen-benchmark result (its kernels' trajectories
and marks share the group's clock): each group's longest stretch in which no kernel timed anything, with its slowest reference; then, summed over the groups,
the seconds before a group's first timing and to its last model descent.
  python results/logs/verify/group_gaps.py results/unseen_s2[6-9].json > results/logs/verify/group_gaps.txt"""
import json, sys
for path in sys.argv[1:]:
  res = json.load(open(path))
  groups: dict[float, list[dict]] = {}
  for e in res["kernels"]: groups.setdefault(e["together_wall_s"], []).append(e)
  wall = sum(groups)
  print(f"{path}: {len(groups)} groups, learned wall {wall:.1f} s")
  for w, ks in groups.items():
    ts = sorted(t for e in ks for _, t, _ in e["trajectory"])
    gap, at = max(((b - a, a) for a, b in zip(ts, ts[1:])), default=(0.0, 0.0))
    slow = max(ks, key=lambda e: e["phases"]["reference_s"])
    print(f"  group wall {w:6.1f} s, {len(ks):2d} kernels: longest stretch with nothing timed {gap:5.1f} s from {at:.1f} s; slowest "
          f"reference {slow['phases']['reference_s']:.1f} s ({slow['name']})")
  first = sum(min((e["trajectory"][0][1] for e in ks if e["trajectory"]), default=0.0) for ks in groups.values())
  desc = sum(max(e["marks"].get("descended", 0.0) for e in ks) for ks in groups.values())
  print(f"  summed over the groups: {first:.1f} s ({first/wall:.0%}) before a group's first timing, {desc:.1f} s ({desc/wall:.0%}) to its last descent")
