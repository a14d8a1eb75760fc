"""Writes one benchmark's section of docs/performance.md, leaving the others alone."""

from __future__ import annotations

import re
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "docs" / "performance.md"


def replace_section(title: str, section: str, path: Path = PATH) -> None:
    """Replace the ``## title`` section (up to the next ``## ``) or append it."""
    text = path.read_text() if path.exists() else "# Performance\n"
    heading = f"## {title}"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    block = f"{heading}\n\n{section.strip()}\n"
    if pattern.search(text):
        text = pattern.sub(lambda _: block + "\n", text).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + block
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
