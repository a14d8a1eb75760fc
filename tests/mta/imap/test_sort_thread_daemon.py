"""SORT and THREAD over the real daemon with Python's imaplib (``sort()``,
``thread()``, and their UID forms): messages appended with their headers,
then ordered and threaded from the columns the store keeps."""

from __future__ import annotations

import imaplib
from typing import Any

from tests.mta.imap.conftest import Imap, Mailbox, run


def message(
    subject: str, sender: str, date: str, message_id: str, refs: str = "", size: int = 0
) -> bytes:
    head = (
        f"From: {sender}\r\nTo: Alice <alice@example.test>\r\nSubject: {subject}\r\n"
        f"Date: {date}\r\nMessage-ID: <{message_id}>\r\n"
    )
    if refs:
        head += f"References: {refs}\r\nIn-Reply-To: {refs.split()[-1]}\r\n"
    return (head + "\r\n" + "body\r\n" + "x" * size + "\r\n").encode()


# In the order appended (sequence numbers 1 to 5; UIDs follow).
MAILBOX = [
    message(
        "Trip plans",
        "Zoe <zoe@remote.test>",
        "Mon, 02 Mar 2026 09:00:00 +0000",
        "trip@remote.test",
        size=500,
    ),
    message(
        "Budget",
        "bob@remote.test",
        "Sun, 01 Mar 2026 09:00:00 +0000",
        "budget@remote.test",
    ),
    message(
        "Re: Trip plans",
        "Adam <adam@remote.test>",
        # 11:00 in New York is 16:00 UTC: after message 4 although it reads earlier.
        "Mon, 02 Mar 2026 11:00:00 -0500",
        "re-trip@remote.test",
        refs="<trip@remote.test>",
        size=200,
    ),
    message(
        "[team] Re: Trip plans",
        "carol@remote.test",
        "Mon, 02 Mar 2026 12:00:00 +0000",
        "re-re-trip@remote.test",
        refs="<trip@remote.test>",
    ),
    message(
        "Fwd: Budget",
        "Bob <bob@remote.test>",
        "Tue, 03 Mar 2026 09:00:00 +0000",
        "fwd-budget@remote.test",
        size=1000,
    ),
]


def expand(ordered: str) -> list[int]:
    """An ESORT sequence set (in the sort order: ``5,1,3:4,2``) as its numbers."""
    out: list[int] = []
    for part in ordered.split(","):
        first, _, last = part.partition(":")
        out += range(int(first), int(last or first) + 1)
    return out


UNDATED = b"From: dan@remote.test\r\nSubject: No date\r\n\r\nbody\r\n"


async def test_sort_and_thread_with_imaplib(imap: Imap, alice: Mailbox) -> None:
    def walk() -> dict[str, Any]:
        c = imap.connect(alice)
        for raw in MAILBOX:
            c.append("INBOX", None, None, raw)
        c.select("INBOX")
        _, uids = c.uid("SEARCH", "ALL")
        out: dict[str, Any] = {"caps": c.capabilities, "uids": uids[0].decode().split()}
        out["date"] = c.sort("(DATE)", "UTF-8", "ALL")  # ordered by PostgreSQL
        out["date_subject"] = c.sort("(DATE SUBJECT)", "UTF-8", "ALL")  # by sort.py
        out["reverse_size"] = c.sort("(REVERSE SIZE)", "UTF-8", "ALL")
        out["subject_date"] = c.sort("(SUBJECT DATE)", "UTF-8", "ALL")
        out["from"] = c.sort("(FROM)", "US-ASCII", "ALL")
        out["displayfrom"] = c.sort("(DISPLAYFROM)", "UTF-8", "ALL")
        out["searched"] = c.sort("(ARRIVAL)", "UTF-8", "FROM", "bob")
        out["uid_sort"] = c.uid("SORT", "(REVERSE DATE)", "UTF-8", "ALL")
        out["none"] = c.sort("(DATE)", "UTF-8", "SUBJECT", '"nothing like this"')
        out["references"] = c.thread("REFERENCES", "UTF-8", "ALL")
        out["orderedsubject"] = c.thread("ORDEREDSUBJECT", "UTF-8", "ALL")
        out["uid_thread"] = c.uid("THREAD", "REFERENCES", "UTF-8", "ALL")
        out["charset"] = c.sort("(DATE)", "KOI8-R", "ALL")
        # ESORT (RFC 5267): one ESEARCH, in the sort order.
        for key, command in (
            ("esort", ("SORT", "RETURN (MIN MAX COUNT ALL)", "(DATE)", "UTF-8", "ALL")),
            ("esort_uid", ("UID", "SORT", "RETURN (ALL)", "(REVERSE SIZE)", "UTF-8", "ALL")),
            ("esort_count", ("SORT", "RETURN (COUNT)", "(DATE)", "UTF-8", "FROM", "nobody")),
            ("esort_default", ("SORT", "RETURN ()", "(ARRIVAL)", "UTF-8", "FROM", "bob")),
        ):
            typ, _ = c._simple_command(*command)
            out[key] = (typ, c.untagged_responses.pop("ESEARCH", None))
        try:
            c._simple_command("SORT", "RETURN (PARTIAL 1:2)", "(DATE)", "UTF-8", "ALL")
        except imaplib.IMAP4.error as exc:
            out["esort_unknown"] = str(exc)
        try:
            c.sort("(COLOUR)", "UTF-8", "ALL")
        except imaplib.IMAP4.error as exc:
            out["bad_key"] = str(exc)
        try:
            c.thread("BY-MOOD", "UTF-8", "ALL")
        except imaplib.IMAP4.error as exc:
            out["bad_algorithm"] = str(exc)
        # A message with no Date: sorts by its INTERNALDATE (1 March, noon).
        c.append("INBOX", None, imaplib.Time2Internaldate(1772366400), UNDATED)
        c.noop()
        out["undated"] = c.sort("(DATE)", "UTF-8", "ALL")
        c.logout()
        return out

    out = await run(walk)
    assert {
        "SORT",
        "SORT=DISPLAY",
        "ESORT",
        "THREAD=ORDEREDSUBJECT",
        "THREAD=REFERENCES",
    } <= set(out["caps"])
    assert out["date"] == ("OK", [b"2 1 4 3 5"])
    assert out["date_subject"] == out["date"]  # no two dates alike: the two paths agree
    assert out["reverse_size"] == ("OK", [b"5 1 3 4 2"])  # 4 carries References
    # Base subjects: Budget (2, 5) before Trip plans (1, 4, 3 by date).
    assert out["subject_date"] == ("OK", [b"2 5 1 4 3"])
    # The local part: adam, bob, bob, carol, zoe (the two bobs by number).
    assert out["from"] == ("OK", [b"3 2 5 4 1"])
    # Display name, else the address: Adam, Bob, bob@remote.test, carol@..., Zoe.
    assert out["displayfrom"] == ("OK", [b"3 5 2 4 1"])
    assert out["searched"] == ("OK", [b"2 5"])
    uid = dict(enumerate(out["uids"], start=1))
    assert out["uid_sort"] == ("OK", [" ".join(uid[n] for n in (5, 3, 4, 1, 2)).encode()])
    assert out["none"] == ("OK", [b""])  # "* SORT" with no numbers
    # 3 and 4 reply to 1; 5 joins 2 by its base subject (a forward under the original).
    assert out["references"] == ("OK", [b"(2 5)(1 (4)(3))"])
    assert out["orderedsubject"] == ("OK", [b"(2 5)(1 (4)(3))"])
    assert out["uid_thread"] == (
        "OK",
        [f"({uid[2]} {uid[5]})({uid[1]} ({uid[4]})({uid[3]}))".encode()],
    )
    typ, data = out["charset"]
    assert typ == "NO" and data[0].startswith(b"[BADCHARSET (UTF-8 US-ASCII)]")
    assert out["esort"] == (
        "OK",
        [b'(TAG "%s") MIN 2 MAX 5 ALL 2,1,4,3,5 COUNT 5' % out["esort"][1][0].split(b'"')[1]],
    )
    listed = out["esort_uid"][1][0].split(b" UID ALL ")[1].decode()
    assert expand(listed) == [int(uid[n]) for n in (5, 1, 3, 4, 2)]
    assert out["esort_count"][1][0].endswith(b" COUNT 0")  # no MIN, MAX or ALL of nothing
    assert out["esort_default"][1][0].endswith(b" ALL 2,5")  # RETURN (): ALL
    assert "unknown SORT RETURN option PARTIAL" in out["esort_unknown"]
    assert "unknown sort key" in out["bad_key"]
    assert "THREAD ORDEREDSUBJECT or THREAD REFERENCES" in out["bad_algorithm"]
    assert out["undated"] == ("OK", [b"2 6 1 4 3 5"])
