"""What the benchmarks share about processes: free ports and CPU time from /proc (Linux)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_pids(pgdata: Path) -> Callable[[], list[int]]:
    """The postmaster of ``pgdata`` and its children (backends, WAL writer ...)."""
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])

    def pids() -> list[int]:
        found = [postmaster]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == postmaster:
                found.append(int(stat.parent.name))
        return found

    return pids
