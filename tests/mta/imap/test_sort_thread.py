"""SORT and THREAD's algorithms (RFC 5256, RFC 5957) over messages made here,
with the RFC's examples: the base subject rules of 2.1, the sort of 3's
``SORT (SUBJECT REVERSE DATE)``, and 4's thread-lists."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from mta.imap.parser import Atom, ParseError
from mta.imap.sort import Criterion, Message, base_subject, criteria, ordered
from mta.imap.thread import Node, ordered_subject, references, thread_list

DAY = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)


def msg(
    seq: int,
    subject: str = "",
    *,
    sent: int = 0,
    arrival: int = 0,
    size: int = 100,
    sender: tuple[str, str] = ("", ""),
    to: tuple[str, str] = ("", ""),
    cc: tuple[str, str] = ("", ""),
    message_id: str | None = None,
    refs: Sequence[str] = (),
    in_reply_to: Sequence[str] = (),
) -> Message:
    return Message(
        seq=seq,
        uid=seq * 10,
        arrival=(DAY + timedelta(minutes=arrival or seq)).timestamp(),
        sent=(DAY + timedelta(minutes=sent or seq)).timestamp(),
        size=size,
        subject=subject,
        sender=sender,
        to=to,
        cc=cc,
        message_id=message_id,
        references=refs,
        in_reply_to=in_reply_to,
    )


def seqs(messages: Sequence[Message]) -> list[int]:
    return [m.seq for m in messages]


def threads(roots: Sequence[Node]) -> str:
    return thread_list(roots, lambda m: m.seq)


# -- the base subject (RFC 5256 2.1) ------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "base", "reply"),
    [
        ("Lunch", "Lunch", False),
        ("Re: Lunch", "Lunch", True),
        ("RE: re:Fwd: Lunch", "Lunch", True),
        ("Fw: Lunch", "Lunch", True),
        ("Re[2]: Lunch", "Lunch", True),  # subj-refwd's optional blob
        ("[list] Re: Lunch", "Lunch", True),  # blobs before a leader
        ("[list] Lunch", "Lunch", False),  # a leading blob (step 4)
        ("[list]", "[list]", False),  # unless nothing would be left
        ("Lunch (fwd)", "Lunch", True),  # subj-trailer (step 2)
        ("Lunch  (fwd) ", "Lunch", True),
        ("[Fwd: Re: Lunch]", "Lunch", True),  # step 6, then again from step 2
        ("  Lunch \t at   noon ", "Lunch at noon", False),  # white space (step 1)
        ("Re: ", "", True),
    ],
)
def test_base_subject_follows_section_2_1(subject: str, base: str, reply: bool) -> None:
    assert base_subject(subject) == (base, reply)


# -- SORT (RFC 5256 3, RFC 5957) ----------------------------------------------------


def test_sort_criteria_parse_and_refuse() -> None:
    words = [Atom("REVERSE"), Atom("date"), Atom("SUBJECT")]
    assert criteria(words) == [Criterion("DATE", True), Criterion("SUBJECT")]
    for bad in ([], [Atom("REVERSE")], [Atom("COLOUR")], [Atom("REVERSE"), Atom("REVERSE")]):
        with pytest.raises(ParseError):
            criteria(bad)
    with pytest.raises(ParseError):
        criteria(Atom("DATE"))  # not in parentheses


def test_the_rfc_example_subject_then_reverse_date() -> None:
    """3's ``SORT (SUBJECT REVERSE DATE) UTF-8 ALL`` answered ``5 3 4 1 2``:
    subjects a < b < c, and within one subject the newest first."""
    mailbox = [
        msg(1, "c", sent=50),
        msg(2, "Re: c", sent=40),
        msg(3, "b", sent=30),
        msg(4, "[list] b", sent=20),
        msg(5, "a", sent=10),
    ]
    by = criteria([Atom("SUBJECT"), Atom("REVERSE"), Atom("DATE")])
    assert seqs(ordered(mailbox, by)) == [5, 3, 4, 1, 2]


def test_each_key_orders_by_its_field_with_the_sequence_number_under_all() -> None:
    mailbox = [
        msg(1, sent=3, arrival=1, size=300, sender=("Zed", "bob@b.test"), to=("", "x@t.test")),
        msg(2, sent=1, arrival=3, size=100, sender=("amy", "Carl@a.test"), cc=("", "a@t.test")),
        msg(3, sent=2, arrival=2, size=100, sender=("", "al@c.test"), to=("Bea", "y@t.test")),
    ]

    def by(*words: str) -> list[int]:
        return seqs(ordered(mailbox, criteria([Atom(w) for w in words])))

    assert by("ARRIVAL") == [1, 3, 2]
    assert by("DATE") == [2, 3, 1]
    assert by("REVERSE", "DATE") == [1, 3, 2]
    assert by("SIZE") == [2, 3, 1]  # 2 and 3 tie: by sequence number
    assert by("REVERSE", "SIZE") == [1, 2, 3]  # a reversed key keeps ties in order
    # FROM: the local part, ASCII case folded (al < bob < Carl).
    assert by("FROM") == [3, 1, 2]
    # DISPLAYFROM: the display name, else the address (al@c.test < amy < Zed).
    assert by("DISPLAYFROM") == [3, 2, 1]
    # A missing field sorts as the empty string, first.
    assert by("CC") == [1, 3, 2]
    assert by("TO") == [2, 1, 3]
    assert by("DISPLAYTO") == [2, 3, 1]


def test_a_row_of_the_store_with_no_subject_or_addresses() -> None:
    row = {"arrival": 1.0, "sent": 1.0, "size": 1, "subject": None}
    row |= {f"{f}_{p}": None for f in ("from", "to", "cc") for p in ("name", "email")}
    undated = Message.of(1, 10, row)
    assert (undated.subject, undated.sender, undated.references) == ("", ("", ""), ())
    assert seqs(ordered([msg(2, "a"), undated], [Criterion("SUBJECT")])) == [1, 2]


# -- THREAD (RFC 5256 4) ---------------------------------------------------------------


def test_thread_lists_read_as_in_the_rfc() -> None:
    """4's examples: ``(2)(3 6 (4 23)(44 7 96))`` and ``((3)(5))``."""

    def node(seq: int, *children: Node) -> Node:
        n = Node(msg(seq))
        for child in children:
            n.adopt(child)
        return n

    tree = [node(2), node(3, node(6, node(4, node(23)), node(44, node(7, node(96)))))]
    assert threads(tree) == "(2)(3 6 (4 23)(44 7 96))"
    dummy = Node()
    dummy.adopt(node(3))
    dummy.adopt(node(5))
    assert threads([dummy]) == "((3)(5))"
    assert threads([]) == ""


def test_orderedsubject_groups_by_base_subject_under_the_earliest() -> None:
    """As 4's ``(174 (175)(176)(178)(181)(180))`` and ``(194 195)``: the
    earliest of a subject is the parent of all the others."""
    mailbox = [
        msg(1, "Lunch", sent=10),
        msg(2, "Re: Lunch", sent=30),
        msg(3, "Budget", sent=5),
        msg(4, "RE: lunch", sent=20),
        msg(5, "Fwd: Budget", sent=40),
        msg(6, "Alone", sent=50),
    ]
    assert threads(ordered_subject(mailbox)) == "(3 5)(1 (4)(2))(6)"


def test_references_links_replies_and_fills_missing_parents() -> None:
    mailbox = [
        msg(1, "Plan", message_id="a@x"),
        msg(2, "Re: Plan", message_id="b@x", refs=["a@x"]),
        msg(3, "Re: Plan", message_id="c@x", refs=["a@x", "b@x"]),
        # In-Reply-To when there are no References.
        msg(4, "Re: Plan", message_id="d@x", in_reply_to=["a@x"]),
        # Two replies to a message this mailbox does not hold: a dummy parent.
        msg(5, "Re: Gone", message_id="e@x", refs=["gone@x"]),
        msg(6, "Re: Gone", message_id="f@x", refs=["gone@x"]),
    ]
    assert threads(references(mailbox)) == "(1 (2 3)(4))((5)(6))"


def test_references_gathers_by_subject_and_survives_loops_and_repeats() -> None:
    mailbox = [
        msg(1, "Trip", message_id="t1@x"),
        # A reply with no references at all joins by subject, as a child.
        msg(2, "Re: Trip", message_id="t2@x"),
        # References in a loop, and one naming itself: the first link stands
        # (3 named 4 its parent), the one that would close the loop is dropped.
        msg(3, "Loop", message_id="l1@x", refs=["l2@x"]),
        msg(4, "Re: Loop", message_id="l2@x", refs=["l1@x", "l2@x"]),
        # A repeated Message-ID: the second is a message of its own.
        msg(5, "Other", message_id="t1@x"),
        # No Message-ID at all.
        msg(6, "Nameless"),
    ]
    assert threads(references(mailbox)) == "(1 2)(4 3)(5)(6)"


def test_references_two_originals_of_one_subject_share_a_dummy() -> None:
    mailbox = [
        msg(1, "Minutes", message_id="m1@x"),
        msg(2, "Minutes", message_id="m2@x"),
        msg(3, "Re: Minutes", message_id="m3@x", refs=["m2@x"]),
    ]
    assert threads(references(mailbox)) == "((1)(2 3))"


def test_a_reply_chain_thousands_deep_is_one_thread() -> None:
    """Each message replying to the one before (a long list thread, or mail
    made to nest): one run of numbers, no recursion limit met."""
    depth = 5000
    mailbox = [msg(1, "Chain", message_id="c1@x")] + [
        msg(n, "Re: Chain", message_id=f"c{n}@x", refs=[f"c{n - 1}@x"]) for n in range(2, depth + 1)
    ]
    expected = "(" + " ".join(str(n) for n in range(1, depth + 1)) + ")"
    assert threads(references(mailbox)) == expected
    # Delivered newest first (each reply before the message it answers: a
    # dummy stands in until then), the same chain from the oldest down.
    backwards = [
        msg(depth + 1 - n, "Re: Chain", sent=n, message_id=f"c{n}@x", refs=[f"c{n - 1}@x"])
        for n in range(2, depth + 1)
    ] + [msg(depth, "Chain", sent=1, message_id="c1@x")]
    assert (
        threads(references(backwards)) == "(" + " ".join(str(n) for n in range(depth, 0, -1)) + ")"
    )
