#!/usr/bin/env python3
"""The local-model table (docs/results/2026-11-23-local-model-smollm2.md) from a run's
output folder.

    typist score OUT/records.jsonl --json > OUT/score.json   (typist run writes it)
    scripts/model-table.py OUT

Integral help and exact share, with their ±2·sd intervals, are `typist score`'s own
(OUT/score.json). The empty rate, latency p50 and p95 and suggestions per hour get
intervals here from the same kind of bootstrap typist uses below 10 repositories:
files resampled within their repositories, 1,000 resamples, a fixed seed; each is
shown as value [2.5th–97.5th percentile].

Suggestions per hour: non-empty suggestions per hour of the assistant's own answering
time (3600 × suggestions / sum of latencies), what one editor asking one case after
another would get. Plain Python, no packages.
"""

import json
import random
import sys
from collections import defaultdict
from pathlib import Path


def percentile(sorted_values, q):
    """Linear interpolation on a sorted list (q in [0, 1]), as `typist score` computes."""
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    i = int(pos)
    if i + 1 < len(sorted_values):
        return sorted_values[i] + (sorted_values[i + 1] - sorted_values[i]) * (pos - i)
    return sorted_values[i]


def figures(records):
    answered = [r for r in records if r["outcome"] in ("suggestion", "empty")]
    empty = sum(r["outcome"] == "empty" for r in answered)
    # Every record's latency, as `typist score` takes them.
    lat = sorted(r["latency_ms"] for r in records if r.get("latency_ms") is not None)
    non_empty = sum(1 for r in answered if r["outcome"] == "suggestion" and r.get("predicted"))
    total_s = sum(lat) / 1000.0  # time spent asking, errors and timeouts included
    return {
        "empty": empty / len(answered) if answered else float("nan"),
        "p50": percentile(lat, 0.5),
        "p95": percentile(lat, 0.95),
        "per_hour": 3600.0 * non_empty / total_s if total_s > 0 else float("nan"),
    }


def main():
    out = Path(sys.argv[1])
    records = [json.loads(l) for l in (out / "records.jsonl").read_text().splitlines() if l.strip()]
    score = json.loads((out / "score.json").read_text())
    by_assistant = defaultdict(list)
    for r in records:
        by_assistant[r["assistant"]].append(r)
    # Files nested in repositories, as typist resamples below 10 repositories.
    repos = defaultdict(set)
    for r in records:
        repos[r["repo"]].add(r["file"])
    repos = {k: sorted(v) for k, v in sorted(repos.items())}
    rng = random.Random(0)
    resamples = []
    for _ in range(1000):
        pick = []
        for repo in sorted(repos):
            files = repos[repo]
            pick += [(repo, rng.choice(files)) for _ in files]
        resamples.append(pick)

    def pct(x):
        return "–" if x != x else f"{100 * x:.1f}"

    print("| assistant | cases | integral help % (±2sd) | exact share % (±2sd) | empty % [95%] "
          "| latency p50 ms [95%] | latency p95 ms [95%] | suggestions/hour [95%] |")
    print("|---|---|---|---|---|---|---|---|")
    for name, recs in sorted(by_assistant.items()):
        by_file = defaultdict(list)
        for r in recs:
            by_file[(r["repo"], r["file"])].append(r)
        point = figures(recs)
        boot = defaultdict(list)
        for pick in resamples:
            f = figures([r for key in pick for r in by_file.get(key, [])])
            for k, v in f.items():
                if v == v:
                    boot[k].append(v)
        iv = {k: (percentile(sorted(v), 0.025), percentile(sorted(v), 0.975)) for k, v in boot.items()}
        a = score["assistants"][name]
        ih, ex = a["integral_help"], a["exact_share"]
        print(
            f"| {name} | {a['cases']} "
            f"| {pct(ih['value'])} ± {pct(2 * ih['sd'])} "
            f"| {pct(ex['value'])} ± {pct(2 * ex['sd'])} "
            f"| {pct(point['empty'])} [{pct(iv['empty'][0])}–{pct(iv['empty'][1])}] "
            f"| {point['p50']:.0f} [{iv['p50'][0]:.0f}–{iv['p50'][1]:.0f}] "
            f"| {point['p95']:.0f} [{iv['p95'][0]:.0f}–{iv['p95'][1]:.0f}] "
            f"| {point['per_hour']:,.0f} [{iv['per_hour'][0]:,.0f}–{iv['per_hour'][1]:,.0f}] |"
        )


if __name__ == "__main__":
    main()
