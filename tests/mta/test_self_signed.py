"""The self-signed certificate under DATA_DIR/tls when several processes start at once.

``--workers 2`` starts two gateways on one DATA_DIR, and ``python -m mta pop3``
beside ``python -m mta managesieve`` two daemons: each asks for the
certificate at start. Before the lock, two generated at the same time and one
started with a key that did not match its certificate (and exited).
"""

from __future__ import annotations

import multiprocessing
import ssl
from pathlib import Path

from mta.submission import tls


def _load(directory: str, start: multiprocessing.synchronize.Barrier) -> str:
    start.wait()
    cert, key = tls.self_signed(Path(directory), "mail.example.test")
    tls.server_context(cert, key)  # raises ssl.SSLError on a mismatched pair
    return cert.read_text()


def test_processes_starting_together_share_one_matching_pair(tmp_path: Path) -> None:
    directory = tmp_path / "tls"
    count = 6
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Manager().Barrier(count)
    with ctx.Pool(count) as pool:
        certs = pool.starmap(_load, [(str(directory), start)] * count)
    assert len(set(certs)) == 1  # one generated, the others read it
    cert, key = tls.self_signed(directory, "mail.example.test")
    assert cert.read_text() == certs[0]
    tls.server_context(cert, key)
    assert (key.stat().st_mode & 0o777) == 0o600
    assert sorted(p.name for p in directory.iterdir()) == [
        ".lock",
        tls.CERT_NAME,
        tls.KEY_NAME,
    ]


def test_a_kept_pair_is_read_not_generated_again(tmp_path: Path) -> None:
    first = tls.self_signed(tmp_path, "mail.example.test")
    text = first[0].read_text()
    again = tls.self_signed(tmp_path, "mail.example.test")
    assert again == first and again[0].read_text() == text
    assert isinstance(tls.server_context(*again), ssl.SSLContext)
