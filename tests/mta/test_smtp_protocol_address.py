"""SMTPProtocol._getaddr's fast path answers exactly what aiosmtpd's parser answers."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest
from aiosmtpd.smtp import SMTP

from mta.smtp.protocol import SMTPProtocol

# MAIL FROM / RCPT TO arguments as _getaddr receives them (keyword stripped), valid
# and invalid: the fast path takes some, aiosmtpd's parser all the others.
ARGUMENTS = [
    "",
    "<>",
    "<> SIZE=100",
    "<>SIZE=1",
    "<>>",
    "<a@b.c>",
    "<A@B.C>",
    "<a@b.c> SIZE=100 BODY=8BITMIME",
    "<a@b.c>  SIZE=1",
    "<a@b.c>\tSIZE=1",
    "<a@b.c> ",
    "<a@b.c>x",
    "<a@b.c>>",
    "<a@b.c> (comment) SIZE=1",
    "<a@b.c>(c)",
    "<a@b.c>  (x)",
    "<a@b.c>\xa0SIZE=1",
    "<a@b.c> \xa0SIZE=1",
    "<a@b.c>\x0bSIZE",
    "<a@b.c>\u2003SIZE",
    "<a.b@c.d>",
    "<first.last+tag@sub.example.co.uk>",
    "<a..b@c.d>",
    "<.a@c.d>",
    "<a.@c.d>",
    "<a@b..c>",
    "<a@.b>",
    "<a@b.>",
    "<a@b-c.d>",
    "<a@-b.c>",
    "<a@b_c.d>",
    "<a@[1.2.3.4]>",
    "<a@[1.2.3.4]> SIZE=1",
    "<a@[IPv6:2001:db8::1]>",
    "<a@[ 1.2.3.4 ]>",
    "<a@[1.2.3.4] >",
    "<a@[]>",
    "<a@[1.2.3.4>",
    '<"quoted local"@b.c>',
    '<"a"@b.c>',
    '<"a\\"b"@c.d>',
    "<@route,@r2:a@b.c>",
    "<@r:a@b.c>",
    "< a@b.c >",
    "< a@b.c>",
    "<a @b.c>",
    "<a@ b.c>",
    "<a@b.c",
    "<a@b.c SIZE=1",
    "a@b.c",
    "a@b.c SIZE=1",
    "<a>",
    "<postmaster>",
    "<a@b@c>",
    "<<a@b.c>>",
    "<a\\b@c.d>",
    "<a(b)@c.d>",
    "<a;b@c.d>",
    "<a,b@c.d>",
    "<a:b@c.d>",
    "<[a]@b.c>",
    "<ü@münchen.de>",
    "<用户@例子.广告>",
    "<a@b\xa0c>",
    "<a\xa0b@c.d>",
    "<a@b\u2003c>",
    "<a\u2028b@c.d>",
    "<=?utf-8?q?x?=@b.c>",
    "<a@=?utf-8?q?x?=>",
    "<a=?b@c.d>",
    "<bounce+x=y.com@b.c>",
    "<SRS0=abc=de=f.com=u@g.h>",
    "<a!#$%&'*+/=?^_`{|}~-@b.c>",
    "<a\x00b@c.d>",
    "<a\x7fb@c.d>",
    "<a\tb@c.d>",
    "<a\rb@c.d>",
    "<a\udcffb@c.d>",
    "<abcdef@x.y>",
    "<abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm@x.y>",
]


class Limited(SMTP):
    local_part_limit = 5


class LimitedProtocol(SMTPProtocol):
    local_part_limit = 5


@pytest.fixture(params=[(SMTP, SMTPProtocol), (Limited, LimitedProtocol)], ids=["0", "5"])
async def pair(request: pytest.FixtureRequest) -> AsyncIterator[tuple[SMTP, SMTPProtocol]]:
    """aiosmtpd's protocol and ours, with no local-part limit and with a limit of 5."""
    theirs, ours = request.param
    loop = asyncio.get_running_loop()
    yield theirs(object(), hostname="t", loop=loop), ours(object(), hostname="t", loop=loop)


def outcome(protocol: SMTP, arg: str) -> object:
    try:
        return protocol._getaddr(arg)
    except Exception as error:  # the parser's own failures must match too
        return type(error)


async def test_the_table_gets_aiosmtpds_answers(pair: tuple[SMTP, SMTPProtocol]) -> None:
    theirs, ours = pair
    for arg in ARGUMENTS:
        assert outcome(ours, arg) == outcome(theirs, arg), repr(arg)


async def test_the_fast_path_takes_the_common_forms(pair: tuple[SMTP, SMTPProtocol]) -> None:
    # Not a round trip through the parser: these answers come from the regular expression.
    _, ours = pair
    assert ours._getaddr("<a.b@c.d> SIZE=10") == ("a.b@c.d", "SIZE=10")
    assert ours._getaddr("<> SIZE=10") == ("<>", " SIZE=10")
    assert ours._getaddr("<ü@münchen.de>") == ("ü@münchen.de", "")
    assert ours._getaddr("<a@[1.2.3.4]>") == ("a@[1.2.3.4]", "")


async def test_random_arguments_get_aiosmtpds_answers(pair: tuple[SMTP, SMTPProtocol]) -> None:
    theirs, ours = pair
    rng = random.Random(5321)
    alphabet = [*'abZ09.@<>[] \t()"\\,:;=?-+_', "ü", "\xa0", "\x01", "\u2003"]
    atoms = ["a", "Z9", "x-y", "=", "?", "ü", ".", "..", "\xa0", " ", "(", '"', "[1.2]", "=?"]
    tails = ["", " SIZE=1", "  x", "\tx", "(c)", " (c) x", "\xa0x", ">"]
    for _ in range(3000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16)))
        arg = ("<" if rng.random() < 0.8 else "") + body
        assert outcome(ours, arg) == outcome(theirs, arg), repr(arg)
        # Near misses of the fast path's form: <local@domain> and parameters.
        local = "".join(rng.choice(atoms) for _ in range(rng.randrange(1, 4)))
        domain = "".join(rng.choice(atoms) for _ in range(rng.randrange(1, 4)))
        arg = f"<{local}@{domain}>{rng.choice(tails)}"
        assert outcome(ours, arg) == outcome(theirs, arg), repr(arg)
