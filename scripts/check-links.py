#!/usr/bin/env python3
"""Checks the relative links and images of every tracked Markdown file.

Every `[text](target)`, `![alt](target)`, `[label]: target` and HTML `href`/`src` whose
target is relative must name a file or folder tracked by git (so it exists in a plain
clone), and a `#anchor` must name a heading of the target Markdown file (GitHub's
slugs). Links in code blocks and code spans are not links. External links (`https:`,
`mailto:`, ...) are not checked. Prints each broken link as `file:line: target: why`
and exits 1 if there is any.

    python3 scripts/check-links.py
"""

import os
import re
import subprocess
import sys
import unicodedata
from urllib.parse import unquote

ROOT = subprocess.run(
    ["git", "rev-parse", "--show-toplevel"],
    capture_output=True, text=True, check=True,
).stdout.strip()

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']*)["']""", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def tracked():
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    files = {f for f in out.split("\0") if f}
    dirs = set()
    for f in files:
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return files, dirs


def lines_outside_code(text):
    """(line number, line) of the lines outside fenced code blocks, code spans blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
                continue
            if mark.startswith(fence):
                fence = None
                continue
        if fence is not None:
            continue
        yield n, re.sub(r"(`+)(.+?)\1", lambda s: " " * len(s.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text (github-slugger): markup dropped, lower
    case, every character that is not a letter, a mark, a number, `_`, a space or `-`
    removed, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.lower()
    kept = "".join(
        c for c in text
        if c in " -_" or unicodedata.category(c)[0] in "LMN"
    )
    return kept.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        fence = None
        for line in text.split("\n"):
            m = FENCE.match(line)
            if m:
                mark = m.group(1)
                if fence is None:
                    fence = mark[0] * len(mark)
                elif mark.startswith(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            h = HEADING.match(line)
            if not h:
                continue
            base = slug(h.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        for m in re.finditer(r"""<a\s+(?:name|id)\s*=\s*["']([^"']+)["']""", text):
            found.add(m.group(1))
        cache[path] = found
    return cache[path]


def check(md, files, dirs):
    """The broken links of `md`, and how many relative links it has."""
    broken = []
    checked = 0
    with open(os.path.join(ROOT, md), encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(md)
    for n, line in lines_outside_code(text):
        targets = [m.group(1) for m in INLINE.finditer(line)]
        targets += [m.group(1) for m in HTML.finditer(line)]
        m = REFERENCE.match(line)
        if m:
            targets.append(m.group(1))
        for raw in targets:
            target = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
            if not target or SCHEME.match(target) or target.startswith("//"):
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            path = unquote(path)
            if path:
                joined = path.lstrip("/") if path.startswith("/") else os.path.join(here, path)
                rel = os.path.normpath(joined).replace(os.sep, "/")
                if rel.startswith("../") or rel == "..":
                    broken.append((n, raw, "points outside the repository"))
                    continue
                rel = "" if rel == "." else rel
                if rel not in files and rel not in dirs and rel != "":
                    why = "no such file" if not os.path.exists(os.path.join(ROOT, rel)) else "not tracked by git"
                    broken.append((n, raw, why))
                    continue
            else:
                rel = md
            if anchor and rel.endswith(".md") and rel in files:
                if unquote(anchor).lower() not in anchors(rel):
                    broken.append((n, raw, f"no heading #{anchor} in {rel}"))
    return broken, checked


def main():
    files, dirs = tracked()
    count = links = pages = 0
    for md in sorted(f for f in files if f.lower().endswith(".md")):
        if not os.path.exists(os.path.join(ROOT, md)):
            continue
        broken, checked = check(md, files, dirs)
        links += checked
        pages += 1
        for n, target, why in broken:
            print(f"{md}:{n}: {target}: {why}")
            count += 1
    if count:
        print(f"{count} broken link(s)", file=sys.stderr)
        return 1
    print(f"{links} relative links in {pages} Markdown files: every one resolves", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
