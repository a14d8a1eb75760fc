"""common/logs.py: the JSON line, the redaction net, and request ids through jobs."""

from __future__ import annotations

import io
import json
import logging
import secrets
from collections.abc import Iterator

import pyotp
import pytest

from common.clock import ManualClock
from common.ids import prefixed_token
from common.jobs import Job, JobQueue
from common.logs import (
    MASK,
    REVEAL,
    JsonFormatter,
    Redact,
    RequestIdFilter,
    accept_request_id,
    current_request_id,
    redact,
    reset_request_id,
    set_request_id,
)
from common.runtime import Runtime


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.addFilter(Redact())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("tests.logs")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_record_is_one_json_object_with_its_request_id_and_fields(captured) -> None:
    logger, stream = captured
    token = set_request_id("req-1")
    try:
        logger.info("sent %s", "message 42", extra={"message_id": "m-42", "attempts": 2})
    finally:
        reset_request_id(token)
    logger.warning("outside any request")
    first, second = lines(stream)
    assert first["message"] == "sent message 42"
    assert (first["level"], first["logger"], first["request_id"]) == ("info", "tests.logs", "req-1")
    assert (first["message_id"], first["attempts"]) == ("m-42", 2)
    assert str(first["time"]).endswith("+00:00")
    assert second["request_id"] is None


def test_a_traceback_stays_inside_its_object(captured) -> None:
    logger, stream = captured
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        logger.exception("failed")
    [entry] = lines(stream)
    assert "ValueError: boom" in str(entry["exception"])


@pytest.mark.parametrize(
    "secret",
    [
        prefixed_token("whsec_"),
        prefixed_token("svcagt_"),
        prefixed_token("re_"),
        secrets.token_urlsafe(32),
        pyotp.random_base32(),
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl",
    ],
    # Fixed ids: the values are random, and every xdist worker must collect
    # the same test names.
    ids=["webhook-secret", "agent-key", "api-key", "urlsafe-token", "totp-secret", "jwt"],
)
def test_credentials_are_masked_wherever_they_appear(captured, secret: str) -> None:
    logger, stream = captured
    logger.info("calling with %s", secret)
    logger.info("payload %s", {"token": secret})
    try:
        raise RuntimeError(f"refused {secret}")
    except RuntimeError:
        logger.exception("failed")
    logger.info("detail", extra={"detail": f"key {secret}"})
    assert secret not in stream.getvalue()
    assert MASK in stream.getvalue()


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abc.def-ghi",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "password=hunter22",
        '{"password": "hunter22"}',
        "Cookie: svc_session=abcdefgh",
        "GET /reset-password?token=abcdef123",
        "code_verifier=abcdefgh",
    ],
)
def test_named_secrets_are_masked(text: str) -> None:
    masked = redact(text)
    assert MASK in masked
    for value in ("abc.def-ghi", "dXNlcjpwYXNzd29yZA==", "hunter22", "abcdefgh", "abcdef123"):
        assert value not in masked


@pytest.mark.parametrize(
    "text",
    [
        "job 12 (mta.outbound_collect_blobs) failed, retry at 2026-01-01 00:00:00+00:00",
        "outbound message 8a233b30-baf5-4571-88b6-d9bc221e92f6: 1 delivered",
        'File "/work/mta/outbound/worker.py", line 190, in _deliver_message',
        "applied migration common/0004_job_request_ids.sql",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_ordinary_lines_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_only_the_marked_development_link_passes_the_net(captured) -> None:
    logger, stream = captured
    link = "http://localhost:4300/verify-email?token=" + secrets.token_urlsafe(32)
    logger.info("verify_email: %s", link, extra={REVEAL: True})
    assert link in stream.getvalue()
    assert REVEAL not in lines(stream)[0]


def test_an_incoming_request_id_is_kept_only_when_sane() -> None:
    assert accept_request_id("abc-123_x.y") == "abc-123_x.y"
    for bad in ("", "has space", "a\r\nInjected: 1", "x" * 129, "é"):
        made = accept_request_id(bad)
        assert made != bad and len(made) == 32
    assert accept_request_id(None) != accept_request_id(None)


async def test_a_job_runs_under_the_request_id_that_enqueued_it(
    runtime: Runtime, clock: ManualClock
) -> None:
    seen: list[str | None] = []

    async def handler(job: Job) -> None:
        seen.append(current_request_id())

    queue = JobQueue(runtime.db, clock)
    queue.register("tests.logs.kind", handler)
    token = set_request_id("req-from-the-request")
    try:
        await queue.enqueue("tests.logs.kind")
    finally:
        reset_request_id(token)
    await queue.enqueue("tests.logs.kind")  # no request: the job gets an id of its own
    assert current_request_id() is None
    assert await queue.run_due() == 2
    assert "req-from-the-request" in seen
    [own] = [s for s in seen if s != "req-from-the-request"]
    assert own is not None
    assert current_request_id() is None
    stored = await runtime.db.fetch_all("SELECT request_id FROM common.jobs ORDER BY id")
    assert [r["request_id"] for r in stored] == ["req-from-the-request", None]
