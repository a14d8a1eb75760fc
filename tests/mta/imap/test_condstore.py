"""IMAP4rev2 after ENABLE, CONDSTORE and QRESYNC (RFC 7162), ESEARCH, UIDPLUS, quota."""

from __future__ import annotations

import re

from tests.mta.imap.conftest import Imap, Mailbox, Raw, run

MESSAGE = b"From: a@remote.test\r\nSubject: s%d\r\n\r\nbody\r\n"


def _append(r: Raw, tag: bytes, n: int) -> bytes:
    body = MESSAGE % n
    r.send(tag + b" APPEND INBOX (\\Seen) {%d+}\r\n" % len(body) + body + b"\r\n")
    return r.until(tag)[-1]


async def test_condstore_qresync_esearch_and_uidplus(imap: Imap, alice: Mailbox) -> None:
    def walk() -> dict[str, list[bytes]]:
        out: dict[str, list[bytes]] = {}
        r = Raw(imap.tls_port)
        r.send(b'a LOGIN %s "%s"\r\n' % (alice.email.encode(), alice.password.encode()))
        r.until(b"a")
        r.send(b"b ENABLE IMAP4rev2 QRESYNC\r\n")
        out["enable"] = r.until(b"b")
        out["append"] = [_append(r, b"c%d" % i, i) for i in range(3)]
        r.send(b"d SELECT INBOX (CONDSTORE)\r\n")
        out["select"] = r.until(b"d")
        highest = int(re.search(rb"HIGHESTMODSEQ (\d+)", b"".join(out["select"]))[1])  # type: ignore[index]
        r.send(b"e UID STORE 2 (UNCHANGEDSINCE %d) +FLAGS (\\Flagged)\r\n" % highest)
        out["store"] = r.until(b"e")
        r.send(b"f UID STORE 2 (UNCHANGEDSINCE %d) -FLAGS (\\Seen)\r\n" % highest)
        out["conflict"] = r.until(b"f")
        r.send(b"g UID FETCH 1:* (FLAGS) (CHANGEDSINCE %d)\r\n" % highest)
        out["changed"] = r.until(b"g")
        r.send(b"h UID STORE 1 +FLAGS.SILENT (\\Deleted)\r\nh2 UID EXPUNGE 1\r\n")
        r.until(b"h")
        out["expunge"] = r.until(b"h2")
        r.send(b"i SEARCH RETURN (MIN MAX COUNT) ALL\r\n")
        out["esearch"] = r.until(b"i")
        r.send(
            b"j UNSELECT\r\nk SELECT INBOX (QRESYNC (%s %d))\r\n"
            % (
                re.search(rb"UIDVALIDITY (\d+)", b"".join(out["select"]))[1],  # type: ignore[index]
                highest,
            )
        )
        r.until(b"j")
        out["qresync"] = r.until(b"k")
        r.send(b"l GETQUOTAROOT INBOX\r\n")
        out["quota"] = r.until(b"l")
        r.close()
        return out

    out = await run(walk)
    assert out["enable"][0] == b"* ENABLED IMAP4rev2 QRESYNC\r\n"
    assert [re.search(rb"APPENDUID \d+ (\d+)", a)[1] for a in out["append"]] == [b"1", b"2", b"3"]  # type: ignore[index]
    assert not any(b"RECENT" in line for line in out["select"])  # rev2 has no \Recent
    assert re.search(
        rb"\* 2 FETCH \(UID 2 FLAGS \(\\Flagged \\Seen\) MODSEQ \(\d+\)\)", b"".join(out["store"])
    )
    assert out["conflict"][-1].startswith(b"f OK [MODIFIED 2]")
    changed = b"".join(out["changed"])
    assert b"UID 2 FLAGS" in changed and b"UID 1 " not in changed and b"UID 3 " not in changed
    assert b"* VANISHED 1\r\n" in out["expunge"]
    assert out["esearch"][0] == b'* ESEARCH (TAG "i") MIN 1 MAX 2 COUNT 2\r\n'
    qresync = b"".join(out["qresync"])
    assert b"* VANISHED (EARLIER) 1\r\n" in qresync and b"UID 2 FLAGS" in qresync
    assert b'* QUOTA "" ()' in b"".join(out["quota"]) or b'* QUOTA "" (STORAGE' in b"".join(
        out["quota"]
    )
