#!/usr/bin/env python3
"""Two runs of one plan, record by record: how many have the same outcome and the same
suggestion, and each difference with what both records say.

    scripts/compare-records.py OUT_A OUT_B [--expand-tabs N]

Records are paired by (case, assistant, pass). `--expand-tabs N` also counts the pairs
that differ only by tabs against spaces drawn to the next stop of N (what a page that
draws a tab as spaces shows). Exits 1 when a record of one run has no partner in the
other. Plain Python, no packages.
"""

import json
import sys
from pathlib import Path


def records(out):
    path = Path(out) / "records.jsonl"
    rows = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            sys.exit(f"{path}:{n}: not JSON: {e}")
        rows[(r["case"], r["assistant"], r.get("pass", 1))] = r
    return rows


def expand(text, size):
    out = []
    for line in (text or "").split("\n"):
        col, drawn = 0, []
        for c in line:
            if c == "\t":
                n = size - col % size
                drawn.append(" " * n)
                col += n
            else:
                drawn.append(c)
                col += 1
        out.append("".join(drawn))
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    tabs = None
    if "--expand-tabs" in args:
        i = args.index("--expand-tabs")
        tabs = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    a, b = records(args[0]), records(args[1])
    alone = sorted(set(a) ^ set(b))
    same, by_tabs, differ = 0, 0, []
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if (x["outcome"], x.get("predicted")) == (y["outcome"], y.get("predicted")):
            same += 1
        elif tabs and x["outcome"] == y["outcome"] and expand(x.get("predicted"), tabs) == expand(
            y.get("predicted"), tabs
        ):
            by_tabs += 1
        else:
            differ.append((key, x, y))
    total = len(set(a) & set(b))
    print(f"{same} of {total} records the same (outcome and suggestion)")
    if tabs:
        print(f"{by_tabs} more differ only by tabs drawn as spaces (stops of {tabs})")
    for (case, assistant, _), x, y in differ:
        def said(r):
            why = r.get("error") or r.get("reason") or ""
            return f"{r['outcome']} {json.dumps(r.get('predicted'))}" + (f" ({why})" if why else "")

        print(f"{case} {assistant}: {said(x)} | {said(y)}")
    for key in alone:
        print(f"only in one run: {key}")
    return 1 if alone else 0


if __name__ == "__main__":
    sys.exit(main())
