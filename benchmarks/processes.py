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


class Sampler:
    """py-spy (requirements/dev.txt) recording ``pids`` and their children while it runs.

    Writes py-spy's raw (collapsed) stacks to ``path``; :func:`top_functions` reads them.
    """

    def __init__(self, pids: list[int], path: Path) -> None:
        import subprocess
        import sys

        py_spy = Path(sys.executable).with_name("py-spy")
        self.procs = [
            subprocess.Popen(
                [str(py_spy), "record", "--pid", str(pid), "--subprocesses", "--nonblocking",
                 "--format", "raw", "--rate", "200", "--output", f"{path}.{pid}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for pid in pids
        ]  # fmt: skip
        self.outputs = [Path(f"{path}.{pid}") for pid in pids]
        self.path = path

    def stop(self) -> None:
        import signal

        for proc in self.procs:
            proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            proc.wait(30)
        with open(self.path, "w") as out:
            for part in self.outputs:
                if part.exists():
                    out.write(part.read_text())
                    part.unlink()


def top_functions(path: Path, count: int = 40) -> list[tuple[str, float, float]]:
    """(function, share of samples it is on the stack of, share it is the leaf of)."""
    inclusive: dict[str, int] = {}
    leaf: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        samples = int(n)
        total += samples
        frames = [f.rsplit(":", 1)[0] for f in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + samples
        leaf[frames[-1]] = leaf.get(frames[-1], 0) + samples
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1])[:count]
    return [(name, n / max(total, 1), leaf.get(name, 0) / max(total, 1)) for name, n in ranked]
