"""offlineimap3 (PyPI `offlineimap` 8.x), a second sync client, both ways with the daemon.

offlineimap talks through imaplib2 rather than mbsync's own C client, and keeps
its state differently (a UID per maildir file name, APPENDUID from UIDPLUS to
learn the UID of what it uploads), so it finds what mbsync does not.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import sys
from pathlib import Path

from mta.submission.server import certificate
from tests.mta.imap.conftest import (
    Imap,
    Mailbox,
    maildir_messages,
    numbered_message,
    run,
    seed_inbox,
    seeded_flagged,
    seeded_seen,
    server_messages,
)

COUNT = 100


def config(imap: Imap, user: Mailbox, root: Path, fingerprint: str) -> str:
    return f"""
[general]
accounts = test
metadata = {root}/state
ui = basic

[Account test]
localrepository = local
remoterepository = remote

[Repository local]
type = Maildir
localfolders = {root}/mail

[Repository remote]
type = IMAP
remotehost = 127.0.0.1
remoteport = {imap.tls_port}
ssl = yes
cert_fingerprint = {fingerprint}
remoteuser = {user.email}
remotepass = {user.password}
folderfilter = lambda name: name == "INBOX"
"""


def fingerprint(imap: Imap) -> str:
    """The daemon's self-signed certificate, pinned: offlineimap's way without a CA."""
    cert, _ = certificate(imap.ctx)
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(Path(cert).read_text())).hexdigest()


async def offlineimap(rc: Path) -> str:
    # One pass (-o), one thread per folder; the entry point of the installed package.
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from offlineimap.init import main; main()",
        "-c", str(rc), "-o", "-u", "basic",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 240)
    text = out.decode(errors="replace")
    assert proc.returncode == 0 and "ERROR" not in text, text
    return text


def flags_agree(local: dict[bytes, str], remote: dict[bytes, bytes]) -> None:
    assert set(local) == set(remote)  # the same bytes both sides
    for raw, flags in local.items():
        assert ("F" in flags) == (b"\\Flagged" in remote[raw])
        assert ("S" in flags) == (b"\\Seen" in remote[raw])
        assert ("R" in flags) == (b"\\Answered" in remote[raw])


async def test_offlineimap_syncs_both_ways_with_identical_bytes_and_flags(
    imap: Imap, alice: Mailbox, tmp_path: Path
) -> None:
    await seed_inbox(imap, alice, COUNT)
    rc = tmp_path / "offlineimaprc"
    rc.write_text(config(imap, alice, tmp_path, fingerprint(imap)))
    await offlineimap(rc)

    inbox = tmp_path / "mail" / "INBOX"
    local = maildir_messages(inbox)
    assert len(local) == COUNT
    for n in range(COUNT):
        flags = local[numbered_message(n)]
        assert ("S" in flags) == seeded_seen(n)
        assert ("F" in flags) == seeded_flagged(n)

    # Server-side changes: 10 answered, 5 new messages arriving.
    def on_server() -> None:
        c = imap.connect(alice)
        c.select("INBOX")
        c.store("1:10", "+FLAGS", "(\\Answered)")
        for n in range(COUNT, COUNT + 5):
            c.append("INBOX", None, None, numbered_message(n))
        c.logout()

    await run(on_server)
    # Local changes: 10 flagged, 10 deleted, 20 new messages.
    files = {
        f.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"): f
        for f in (*(inbox / "cur").iterdir(), *(inbox / "new").iterdir())
    }
    for n in range(60, 70):
        f = files[numbered_message(n)]
        base, _, flags = f.name.partition(":2,")
        f.rename(inbox / "cur" / f"{base}:2,{''.join(sorted(flags.replace('F', '') + 'F'))}")
    for n in range(50, 60):
        files[numbered_message(n)].unlink()
    for n in range(COUNT + 5, COUNT + 25):
        local_bytes = numbered_message(n).replace(b"\r\n", b"\n")
        (inbox / "new" / f"17000000{n}.local{n}").write_bytes(local_bytes)
    await offlineimap(rc)

    remote = await server_messages(imap, alice)
    assert len(remote) == COUNT + 25 - 10
    for n in range(COUNT + 5, COUNT + 25):
        assert numbered_message(n) in remote  # uploaded byte for byte
    local_after = maildir_messages(inbox)
    for n in range(50, 60):
        assert numbered_message(n) not in remote  # expunged
    for n in range(60, 70):
        assert b"\\Flagged" in remote[numbered_message(n)]
    for n in range(10):
        assert "R" in local_after[numbered_message(n)]  # \\Answered came down
    flags_agree(local_after, remote)

    # A second pass with nothing changed moves nothing.
    await offlineimap(rc)
    flags_agree(maildir_messages(inbox), await server_messages(imap, alice))
    assert len(await server_messages(imap, alice)) == COUNT + 25 - 10
