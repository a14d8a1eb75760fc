"""The outbound DKIM signer: dkimpy's bytes exactly, keys parsed once, a rotated key used at once."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from unittest import mock

import dkim
import pytest

from common.runtime import Runtime
from mail.directory import SigningKey
from mail.dkim import keys
from mta import mailstore
from mta.context import MtaContext
from mta.outbound import relaxed, signer
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from tests.mta import sending
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.sending import ReceiverHandler, Sender

HEAD = (
    b"From: Alice <alice@example.test>\r\nTo: bob@remote.test\r\nSubject: Figures\r\n"
    b"Date: Mon, 01 Jan 2030 12:00:00 +0000\r\nMessage-ID: <s1@example.test>\r\n"
)
LONG = b"word " * 400

# Bodies and header blocks that exercise each rule of relaxed canonicalization
# (RFC 6376 3.4.2 and 3.4.4) and dkimpy's parsing.
MESSAGES = {
    "plain": HEAD + b"\r\nSee attached.\r\n",
    "trailing spaces and tabs": HEAD + b"\r\nline one   \r\nline two\t\t\r\n \t \r\nthree\r\n",
    "runs inside lines": HEAD + b"\r\na  b\tc \t d\r\n\tindented\r\n  two spaces\r\n",
    "empty body": HEAD + b"\r\n",
    "only blank lines": HEAD + b"\r\n\r\n\r\n\r\n",
    "blank lines at the end": HEAD + b"\r\ntext\r\n\r\n\r\n \r\n",
    "no final line end": HEAD + b"\r\nlast line without an end  ",
    "trailing space on an unended last line": HEAD + b"\r\none\r\ntwo \t",
    "no body at all": HEAD,
    "header block unended": HEAD.rstrip(b"\r\n"),
    "long lines": HEAD + b"\r\n" + LONG + b"\r\n" + LONG.replace(b" ", b"\t") + b"\r\n",
    "a bare CR inside a line": HEAD + b"\r\nbefore \r after\r\n",
    "folded and spaced header fields": (
        b"From:   Alice\r\n   <alice@example.test>  \r\nTo: bob@remote.test,\r\n\tcarol@remote.test\r\n"
        b"SUBJECT:\tMany   spaces\there \r\nDate: Mon, 01 Jan 2030 12:00:00 +0000\r\n\r\nbody\r\n"
    ),
    "repeated fields": (
        b"From: a@example.test\r\nTo: x@remote.test\r\nTo: y@remote.test\r\n"
        b"From: b@example.test\r\nSubject: one\r\nReceived: by here\r\n\r\nbody\r\n"
    ),
    "every signed field": (
        HEAD + b"Cc: c@remote.test\r\nMIME-Version: 1.0\r\nContent-Type: text/plain;\r\n"
        b" charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\nReply-To: r@example.test\r\n"
        b"In-Reply-To: <p@x>\r\nReferences: <o@x>\r\n <p@x>\r\n\r\nbody \xc3\xa9\r\n"
    ),
    "a long subject": HEAD.replace(b"Figures", b"Figures " * 40) + b"\r\nbody\r\n",
}


@pytest.fixture(scope="module")
def rsa_key() -> tuple[SigningKey, bytes]:
    pair = keys.generate_sync(keys.RSA)
    key = SigningKey("example.test", "sel", keys.RSA, pair.private_key)
    return key, b"v=DKIM1; k=rsa; p=" + pair.public_key_b64.encode()


@pytest.fixture
def frozen_time() -> Iterator[None]:
    # t= is the signing second: the same one for both signers.
    with mock.patch("time.time", return_value=1_900_000_000.25):
        yield


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_the_signature_is_dkimpys_byte_for_byte_and_verifies(
    name: str, rsa_key: tuple[SigningKey, bytes], frozen_time: None
) -> None:
    key, record = rsa_key
    raw = MESSAGES[name]
    ours = signer._sign(raw, key)
    theirs = dkim.sign(
        raw,
        b"sel",
        b"example.test",
        key.private_key,
        canonicalize=(b"relaxed", b"relaxed"),
        include_headers=signer.header_list(raw),
    )
    assert ours == theirs
    assert dkim.verify(ours + raw, dnsfunc=lambda name, timeout=5: record)


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_relaxed_body_is_dkimpys(name: str) -> None:
    from dkim.canonicalization import Relaxed

    _, body = relaxed.split(MESSAGES[name])
    assert relaxed.relaxed_body(body) == Relaxed.canonicalize_body(body)


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_relaxed_headers_are_dkimpys(name: str) -> None:
    from dkim.canonicalization import Relaxed

    headers, _ = relaxed.split(MESSAGES[name])
    assert relaxed.relaxed_headers(headers) == Relaxed.canonicalize_headers(headers)


def test_a_message_with_bare_line_ends_is_signed_by_dkimpy_as_before(
    rsa_key: tuple[SigningKey, bytes], frozen_time: None
) -> None:
    key, record = rsa_key
    raw = MESSAGES["trailing spaces and tabs"].replace(b"\r\n", b"\n")
    ours = signer._sign(raw, key)
    assert ours == dkim.sign(
        raw,
        b"sel",
        b"example.test",
        key.private_key,
        canonicalize=(b"relaxed", b"relaxed"),
        include_headers=signer.header_list(raw),
    )
    assert dkim.verify(ours + raw, dnsfunc=lambda name, timeout=5: record)


def test_a_header_dkimpy_cannot_parse_is_its_error_as_before(
    rsa_key: tuple[SigningKey, bytes],
) -> None:
    raw = b"From: a@example.test\r\nnot a header line\r\n\r\nbody\r\n"
    with pytest.raises(dkim.MessageFormatError):
        signer._sign(raw, rsa_key[0])


def test_a_key_is_parsed_once_and_a_new_key_under_the_same_selector_is_used() -> None:
    first = keys.generate_sync(keys.RSA)
    second = keys.generate_sync(keys.RSA)
    one = SigningKey("cache.test", "same", keys.RSA, first.private_key)
    two = SigningKey("cache.test", "same", keys.RSA, second.private_key)
    raw = MESSAGES["plain"].replace(b"example.test", b"cache.test")
    with mock.patch.object(
        signer.serialization,
        "load_pem_private_key",
        wraps=signer.serialization.load_pem_private_key,
    ) as load:
        signer._sign(raw, one)
        signer._sign(raw, one)
        assert load.call_count == 1
        signed = signer._sign(raw, two)
        assert load.call_count == 2
    record = b"v=DKIM1; k=rsa; p=" + second.public_key_b64.encode()
    assert dkim.verify(signed + raw, dnsfunc=lambda name, timeout=5: record)


# The worker: keys read once per claim, a rotated key signing the next message.


@pytest.fixture
async def remote(dns_server: LoopbackDNS) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "remote.test")
        sending.mx(dns_server, "example.test")
        yield handler, port


@pytest.fixture(params=[0, 1], ids=["in the worker", "in a signing process"])
async def worker(
    request: pytest.FixtureRequest,
    runtime: Runtime,
    mta_config: MtaSettings,
    remote: tuple[ReceiverHandler, int],
) -> AsyncIterator[OutboundWorker]:
    config = replace(
        mta_config,
        outbound_smtp_port=remote[1],
        mta_sts=False,
        outbound_signing_processes=request.param,
    )
    w = OutboundWorker(MtaContext.build(runtime, config))
    yield w
    await w.close()


async def _enqueue(runtime: Runtime, sender: Sender, raw: bytes) -> None:
    async with runtime.db.transaction() as conn:
        await mailstore.enqueue(
            conn,
            message_id=str(uuid.uuid4()),
            account_id=sender.account_id,
            source="api",
            mail_from=sender.email,
            recipients=["bob@remote.test"],
            raw=raw,
            now=runtime.clock.now(),
        )


async def test_a_rotated_key_signs_the_next_message(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
) -> None:
    from tests.mta.test_outbound_delivery import dkim_verify

    handler, _ = remote
    alice = await sending.hosted_sender(runtime.db)
    await sending.dkim_key(runtime, dns_server, alice, keys.RSA, "first")
    for n in range(3):  # three messages of one claim, one key read
        await _enqueue(runtime, alice, MESSAGES["plain"].replace(b"See", f"{n} see".encode()))
    assert await worker.drain() == 3

    await sending.dkim_key(runtime, dns_server, alice, keys.RSA, "second")
    await _enqueue(runtime, alice, MESSAGES["runs inside lines"])
    assert await worker.drain() == 1

    selectors = [m.message["DKIM-Signature"].split("s=")[1].split(";")[0] for m in handler.messages]
    assert selectors == ["first", "first", "first", "second"]
    for got in handler.messages:
        assert "dkim=pass" in dkim_verify(dns_server, got.data)


async def test_a_domain_without_a_key_is_sent_unsigned_and_others_signed_in_one_claim(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
) -> None:
    handler, _ = remote
    alice = await sending.hosted_sender(runtime.db)
    await sending.dkim_key(runtime, dns_server, alice, keys.RSA, "only")
    other = MESSAGES["plain"].replace(b"alice@example.test", b"someone@elsewhere.test")
    await _enqueue(runtime, alice, other)
    await _enqueue(runtime, alice, MESSAGES["plain"])
    assert await worker.drain() == 2
    signed = {m.message["From"]: m.message["DKIM-Signature"] for m in handler.messages}
    assert signed["Alice <someone@elsewhere.test>"] is None
    assert "s=only" in signed["Alice <alice@example.test>"]


FROM_VALUES = [
    b"alice@example.test",
    b"Alice <alice@example.test>",
    b"<alice@example.test>",
    b"  Alice  Smith_2-x   <a.b+tag@Sub.Example.TEST.>  ",
    b'"Smith, Alice" <alice@quoted.test>',
    b"alice@example.test, bob@other.test",
    b"Alice <alice@example.test> (comment)",
    b"=?utf-8?q?Al=C3=AFce?= <alice@encoded.test>",
    b"alice",
    b"",
    b"Undisclosed:;",
    b"Alice\r\n <alice@folded.test>",
    b"<alice@example.test>\r\n\t(continued)",
    b"a..b@example.test",
    b".a@example.test",
    b"alice@[127.0.0.1]",
    b"al\xc3\xafce@example.test",
    b"Al\xc3\xafce <alice@utf8.test>",
    b"<alice@example.test",
    b"alice@example.test>",
    b"Alice <alice@example.test> <bob@two.test>",
    b"alice@-dash.test",
]


@pytest.mark.parametrize("value", FROM_VALUES)
@pytest.mark.parametrize(
    "layout",
    ["first", "after others", "two From fields", "lower-case name", "LF line ends", "a bad line"],
)
def test_the_from_domain_read_without_the_parser_is_the_parsers(value: bytes, layout: str) -> None:
    field = b"From: " + value
    head = {
        "first": field + b"\r\nTo: b@remote.test",
        "after others": b"Received: by x;\r\n\tMon, 1 Jan 2030\r\nTo: b@r.test\r\n" + field,
        "two From fields": field + b"\r\nFrom: second@second.test",
        "lower-case name": b"from: " + value + b"\r\nSubject: x",
        "LF line ends": (field + b"\r\nTo: b@remote.test").replace(b"\r\n", b"\n"),
        "a bad line": b"Subject: x\r\nnot a field\r\n" + field,
    }[layout]
    sep = b"\n\n" if layout == "LF line ends" else b"\r\n\r\n"
    assert signer.from_domain(head + sep + b"body\r\n") == signer._parsed_from_domain(head)


def test_the_common_from_fields_skip_the_parser() -> None:
    with mock.patch.object(signer, "_parsed_from_domain") as parsed:
        assert signer.from_domain(MESSAGES["plain"]) == "example.test"
        assert signer.from_domain(b"From: Bench <x@Bench.Test>\r\n\r\n") == "bench.test"
    assert parsed.call_count == 0
