"""``make docs``: every Markdown page's relative links and anchors resolve.

Checks README.md, docs/*.md and each package's README.md: a link to a file
must point at an existing file, and a ``#fragment`` must match a heading of
the target page (GitHub's slug rules). Exits non-zero listing every break.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^(```|~~~)")


def slug(heading: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    counts: dict[str, int] = {}
    in_fence = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else HEADING.match(line)
        if m:
            base = slug(m.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def pages() -> list[Path]:
    out = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    out += sorted(ROOT.glob("*/README.md"))
    return [p for p in out if p.exists() and ".venv" not in p.parts]


def check(page: Path) -> list[str]:
    problems = []
    in_fence = False
    for lineno, line in enumerate(page.read_text().splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, mailto: ... are not ours to check offline
            file_part, _, fragment = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(ROOT)}:{lineno}"
            if not dest.exists():
                problems.append(f"{where}: {target}: no such file")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                problems.append(f"{where}: {target}: no heading #{fragment}")
    return problems


def main() -> int:
    checked = pages()
    problems = [p for page in checked for p in check(page)]
    for problem in problems:
        print(problem)
    print(f"docs: {len(checked)} pages, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
