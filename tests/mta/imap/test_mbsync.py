"""mbsync (isync, Debian) syncing a few hundred messages both ways with the daemon."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from mta.submission.server import certificate
from tests.mta.imap.conftest import (
    Imap,
    Mailbox,
    maildir_messages,
    numbered_message,
    seed_inbox,
    seeded_flagged,
    seeded_seen,
    server_messages,
)

MBSYNC = shutil.which("mbsync")
pytestmark = pytest.mark.skipif(
    MBSYNC is None, reason="mbsync (isync) is not installed: make imap-server"
)
COUNT = 300


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
    """Its output with the protocol exchange (``-Dn``: what it sent, what it read)."""
    proc = await asyncio.create_subprocess_exec(
        MBSYNC or "mbsync", "-Dn", "-c", str(rc), "-a",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, out.decode()
    return out.decode()


def without_tuid(data: bytes) -> bytes:
    """mbsync marks the copies it writes (either side) with an X-TUID field of its
    own, to find them again: its bookkeeping, not the message."""
    return re.sub(rb"(?m)^X-TUID: [^\r]*\r\n", b"", data, count=1)


async def test_mbsync_syncs_both_ways_with_identical_bytes_and_flags(
    imap: Imap, alice: Mailbox, tmp_path: Path
) -> None:
    await seed_inbox(imap, alice, COUNT)
    cert, _ = certificate(imap.ctx)
    maildir = tmp_path / "mail"
    maildir.mkdir()
    rc = tmp_path / "mbsyncrc"
    rc.write_text(config(imap, alice, maildir, Path(cert)))
    os.chmod(rc, 0o600)
    first = await mbsync(rc)
    # isync turns COMPRESS=DEFLATE on when offered (RFC 4978): all that follows
    # went both ways deflated.
    assert re.search(r"(?m)^(\d+) OK DEFLATE active", first), first[:2000]

    local = maildir_messages(maildir / "INBOX", without_tuid)
    assert len(local) == COUNT
    for n in range(COUNT):
        flags = local[numbered_message(n)]
        assert ("S" in flags) == seeded_seen(n)
        assert ("F" in flags) == seeded_flagged(n)

    # Local changes: 40 new messages, 10 flagged, 10 trashed (expunged on the next sync).
    cur = maildir / "INBOX" / "cur"
    files = sorted(cur.iterdir())
    for i, f in enumerate(files[:20]):
        base, _, flags = f.name.partition(":2,")
        extra = "F" if i < 10 else "T"
        f.rename(cur / f"{base}:2,{''.join(sorted(flags + extra))}")
    for n in range(COUNT, COUNT + 40):
        local_bytes = numbered_message(n).replace(b"\r\n", b"\n")
        (maildir / "INBOX" / "new" / f"17000000{n}.local.{n}").write_bytes(local_bytes)
    await mbsync(rc)

    remote = await server_messages(imap, alice, without_tuid)
    assert len(remote) == COUNT + 40 - 10
    local_after = maildir_messages(maildir / "INBOX", without_tuid)
    assert set(local_after) == set(remote)  # the same bytes both sides
    for raw, flags in local_after.items():
        assert ("F" in flags) == (b"\\Flagged" in remote[raw])
        assert ("S" in flags) == (b"\\Seen" in remote[raw])
