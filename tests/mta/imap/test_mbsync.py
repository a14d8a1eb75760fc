"""mbsync (isync, Debian) syncing a few hundred messages both ways with the daemon."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from mta.submission.server import certificate
from tests.mta.imap.conftest import Imap, Mailbox, run

MBSYNC = shutil.which("mbsync")
pytestmark = pytest.mark.skipif(
    MBSYNC is None, reason="mbsync (isync) is not installed: make imap-server"
)
COUNT = 300


def message(n: int) -> bytes:
    return (
        f"From: Sender {n} <s{n}@remote.test>\r\nTo: alice@example.test\r\n"
        f"Subject: message {n}\r\nMessage-ID: <m{n}@remote.test>\r\n\r\nbody {n}\r\n"
        + "x" * (n % 97)
        + "\r\n"
    ).encode()


def config(imap: Imap, user: Mailbox, maildir: Path, cert: Path) -> str:
    return f"""
IMAPAccount acc
Host 127.0.0.1
Port {imap.tls_port}
User {user.email}
Pass "{user.password}"
SSLType IMAPS
CertificateFile {cert}

IMAPStore remote
Account acc

MaildirStore local
Path {maildir}/
Inbox {maildir}/INBOX
SubFolders Verbatim

Channel sync
Far :remote:
Near :local:
Patterns INBOX Archive
Create Both
Expunge Both
SyncState *
Sync All
"""


async def mbsync(rc: Path) -> str:
    proc = await asyncio.create_subprocess_exec(
        MBSYNC or "mbsync", "-c", str(rc), "-a",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, out.decode()
    return out.decode()


def without_tuid(data: bytes) -> bytes:
    """mbsync marks the copies it writes (either side) with an X-TUID field of its
    own, to find them again: its bookkeeping, not the message."""
    return re.sub(rb"(?m)^X-TUID: [^\r]*\r\n", b"", data, count=1)


def maildir_messages(folder: Path) -> dict[bytes, str]:
    """Message bytes -> maildir flags of every message in a maildir folder. A
    maildir keeps Unix line ends (mbsync turns CRLF into LF on the way down and
    back on the way up): read here with CRLF, the bytes the server holds."""
    out = {}
    for sub in ("cur", "new"):
        for f in (folder / sub).iterdir():
            flags = f.name.split(":2,")[1] if ":2," in f.name else ""
            data = f.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            out[without_tuid(data)] = flags
    return out


async def test_mbsync_syncs_both_ways_with_identical_bytes_and_flags(
    imap: Imap, alice: Mailbox, tmp_path: Path
) -> None:
    def seed() -> None:
        c = imap.connect(alice)
        for n in range(COUNT):
            flags = "(\\Seen)" if n % 2 else "(\\Seen \\Flagged)" if n % 3 == 0 else None
            c.append("INBOX", flags, None, message(n))
        c.logout()

    await run(seed)
    cert, _ = certificate(imap.ctx)
    maildir = tmp_path / "mail"
    maildir.mkdir()
    rc = tmp_path / "mbsyncrc"
    rc.write_text(config(imap, alice, maildir, Path(cert)))
    os.chmod(rc, 0o600)
    await mbsync(rc)

    local = maildir_messages(maildir / "INBOX")
    assert len(local) == COUNT
    for n in range(COUNT):
        flags = local[message(n)]
        assert ("S" in flags) == bool(n % 2 or n % 3 == 0)
        assert ("F" in flags) == (not n % 2 and n % 3 == 0)

    # Local changes: 40 new messages, 10 flagged, 10 trashed (expunged on the next sync).
    cur = maildir / "INBOX" / "cur"
    files = sorted(cur.iterdir())
    for i, f in enumerate(files[:20]):
        base, _, flags = f.name.partition(":2,")
        extra = "F" if i < 10 else "T"
        f.rename(cur / f"{base}:2,{''.join(sorted(flags + extra))}")
    for n in range(COUNT, COUNT + 40):
        local_bytes = message(n).replace(b"\r\n", b"\n")
        (maildir / "INBOX" / "new" / f"17000000{n}.local.{n}").write_bytes(local_bytes)
    await mbsync(rc)

    def server_view() -> dict[bytes, bytes]:
        c = imap.connect(alice)
        c.select("INBOX", readonly=True)
        _, data = c.fetch("1:*", "(FLAGS BODY.PEEK[])")
        c.logout()
        return {without_tuid(part[1]): part[0] for part in data if isinstance(part, tuple)}

    remote = await run(server_view)
    assert len(remote) == COUNT + 40 - 10
    local_after = maildir_messages(maildir / "INBOX")
    assert set(local_after) == set(remote)  # the same bytes both sides
    for raw, flags in local_after.items():
        assert ("F" in flags) == (b"\\Flagged" in remote[raw])
        assert ("S" in flags) == (b"\\Seen" in remote[raw])
