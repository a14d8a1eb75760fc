"""``make dev``: run the gateway and restart it when a source file changes.

A small polling supervisor (no extra dependency): it watches the mtimes of the
project's .py and .sql files and restarts ``python -m gateway`` with SIGTERM,
so the embedded database is stopped and started cleanly each time.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WATCHED = ("common", "gateway", "oauth", "content", "mail", "mta")
POLL_SECONDS = 1.0


def snapshot() -> dict[Path, float]:
    stamps = {}
    for package in WATCHED:
        for pattern in ("*.py", "*.sql"):
            for path in (ROOT / package).rglob(pattern):
                try:
                    stamps[path] = path.stat().st_mtime
                except FileNotFoundError:
                    continue
    return stamps


def start(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "gateway", *args], cwd=ROOT)  # noqa: S603


def main() -> int:
    args = sys.argv[1:]
    child = start(args)
    seen = snapshot()
    try:
        while True:
            time.sleep(POLL_SECONDS)
            now = snapshot()
            if now != seen:
                seen = now
                print("dev: change detected, restarting", file=sys.stderr)
                child.send_signal(signal.SIGTERM)
                child.wait()
                child = start(args)
            elif child.poll() is not None:
                # Crashed (a syntax error, say): wait for the next change.
                continue
    except KeyboardInterrupt:
        pass
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            child.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
