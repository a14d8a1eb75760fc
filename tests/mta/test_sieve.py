"""The Sieve interpreter on its own: flags, tests and how filters combine."""

from __future__ import annotations

import pytest

from mta.message import parse_message
from mta.sieve.compiler import SieveError, compile_script
from mta.sieve.interpreter import Envelope, Incoming, SieveRuntimeError, run

RAW = (
    b"From: Bob <bob@lists.example.test>\r\nTo: alice@example.test\r\n"
    b"Subject: [python-dev] Release 3.14\r\nList-Id: <python-dev.python.org>\r\n\r\n"
    b"The release is out.\r\n"
)
HEADER = 'require ["fileinto", "imap4flags", "envelope", "body", "copy"];\n'


def outcome(*scripts: str):  # type: ignore[no-untyped-def]
    parsed = parse_message(RAW)
    compiled = [(f"f{i}", compile_script(HEADER + s)) for i, s in enumerate(scripts)]
    envelope = Envelope("bob@lists.example.test", "alice@example.test")
    return run(compiled, Incoming(parsed.message, len(RAW), envelope))


def kinds(result) -> list[tuple[str, str | None, tuple[str, ...]]]:  # type: ignore[no-untyped-def]
    return [(a.kind, a.mailbox or a.address, a.keywords) for a in result.final]


def test_setflag_addflag_removeflag_hasflag() -> None:
    result = outcome(
        'setflag ["\\\\Seen", "junk-ish"];\n'
        'addflag "$flagged";\n'
        'removeflag "junk-ish";\n'
        'if hasflag "$flagged" { fileinto "Flagged"; }\n'
    )
    assert kinds(result) == [("fileinto", "Flagged", ("$flagged", "$seen"))]


@pytest.mark.parametrize(
    ("test", "matches"),
    [
        ('header :matches "subject" "[python-*] *"', True),
        ('header :contains "list-id" "python-dev"', True),
        ('header :is "subject" "release"', False),
        ('address :domain :is "from" "lists.example.test"', True),
        ('address :localpart :is "to" "alice"', True),
        ('envelope :domain :is "from" "lists.example.test"', True),
        ('exists ["List-Id", "From"]', True),
        ('exists "X-Spam"', False),
        ("size :under 1K", True),
        ("size :over 1M", False),
        ('body :text :contains "release is out"', True),
        ("allof (true, not false, anyof (false, true))", True),
        ('header :comparator "i;octet" :is "subject" "[PYTHON-DEV] RELEASE 3.14"', False),
    ],
)
def test_tests(test: str, matches: bool) -> None:
    result = outcome(f'if {test} {{ fileinto "Hit"; }}')
    assert (kinds(result)[0][:2] == ("fileinto", "Hit")) is matches


def test_filters_run_in_order_as_one_script_until_stop() -> None:
    result = outcome('fileinto :copy "A";', "stop;", 'fileinto "Never";')
    assert kinds(result) == [("fileinto", "A", ()), ("keep", None, ())]
    assert result.stopped and result.matched == ["f0"]


def test_discard_alone_keeps_nothing() -> None:
    assert kinds(outcome("discard;")) == []


def test_runtime_errors() -> None:
    with pytest.raises(SieveRuntimeError):
        outcome('redirect "nobody";')
    with pytest.raises(SieveRuntimeError):
        outcome('addflag "\\\\Unknown";')


def test_compile_errors_name_their_line() -> None:
    with pytest.raises(SieveError) as error:
        compile_script('require "fileinto";\nif header :is "x" "y" {\n  fileinto\n}\n')
    assert error.value.line == 4
    with pytest.raises(SieveError) as error:
        compile_script('keep;\nnotify "mailto:x@y";')
    assert error.value.line == 2
