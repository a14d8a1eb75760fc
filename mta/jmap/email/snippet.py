"""SearchSnippet/get (RFC 8621 5.1): where the search words matched, marked.

The words are those of the filter's text, subject and body conditions (NOT
branches left out: nothing to show there). The subject is returned marked
when a word is in it; the preview is up to 255 characters of the text body
around the first word found. Text is HTML-escaped before ``<mark>`` goes in,
so a message can never inject markup into a client's page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from common.db import Conn
from mta.jmap.email import mime
from mta.jmap.email.context import EmailContext, valid_ids
from mta.jmap.email.errors import MethodError
from mta.jmap.email.get import load_rows
from mta.jmap.email.query import Sql, condition, search_words

PREVIEW = 255
_TAGS = re.compile(r"<[^>]*>")
_WS = re.compile(r"\s+")


def filter_words(filt: object) -> tuple[list[str], list[str]]:
    """(words for the subject, words for the body) of the positive text conditions."""
    subject: list[str] = []
    body: list[str] = []
    if isinstance(filt, Mapping):
        if "operator" in filt:
            if filt.get("operator") != "NOT":
                for cond in filt.get("conditions") or []:
                    s, b = filter_words(cond)
                    subject += s
                    body += b
        else:
            for name in ("text", "subject"):
                if isinstance(filt.get(name), str):
                    subject += search_words(filt[name])
            for name in ("text", "body"):
                if isinstance(filt.get(name), str):
                    body += search_words(filt[name])
    return list(dict.fromkeys(subject)), list(dict.fromkeys(body))


def _pattern(words: list[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b({alternatives})\b", re.IGNORECASE | re.UNICODE)


def mark(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` HTML-escaped, each match wrapped in <mark>."""
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(html.escape(text[last : m.start()]))
        out.append(f"<mark>{html.escape(m.group(0))}</mark>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def excerpt(text: str, pattern: re.Pattern[str]) -> str | None:
    text = _WS.sub(" ", text).strip()
    found = pattern.search(text)
    if found is None:
        return None
    start = max(0, found.start() - 60)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < found.start() else start
    return mark(text[start : start + PREVIEW], pattern)


def _body_text(data: bytes) -> str:
    msg = mime.parse_raw(data)
    text_parts, _html, _att = mime.body_lists(mime.structure(msg))
    chunks = []
    for part in text_parts:
        if part.type in ("text/plain", "text/html"):
            value = mime.body_value(part, 256 * 1024)["value"]
            chunks.append(_TAGS.sub(" ", value) if part.type == "text/html" else value)
    return " ".join(chunks)


async def get_snippets(
    ctx: EmailContext, conn: Conn, account_id: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    raw_ids = args.get("emailIds")
    if raw_ids is None:
        raise MethodError("invalidArguments", "emailIds is required")
    if len(raw_ids) > ctx.max_objects_in_get:
        raise MethodError("requestTooLarge", f"at most {ctx.max_objects_in_get} emailIds")
    ids = valid_ids(raw_ids)
    filt = args.get("filter")
    if filt is not None:
        condition(Sql(), filt)  # unsupportedFilter / invalidArguments as Email/query says
    subject_words, body_words = filter_words(filt)
    subject_re, body_re = _pattern(subject_words), _pattern(body_words)
    rows = {r.id: r for r in await load_rows(conn, account_id, ids, with_raw=body_re is not None)}
    found: list[dict[str, Any]] = []
    not_found: list[str] = []
    for email_id in dict.fromkeys(raw_ids):
        row = rows.get(email_id)
        if row is None:
            not_found.append(email_id)
            continue
        subject = None
        if subject_re is not None and subject_re.search(row.subject):
            subject = mark(row.subject, subject_re)
        preview = None
        if body_re is not None:
            raw = row.raw
            data = bytes(raw) if raw is not None else await ctx.raw.get(row.blob_id)
            preview = excerpt(_body_text(data), body_re)
        found.append({"emailId": email_id, "subject": subject, "preview": preview})
    return {"accountId": account_id, "list": found, "notFound": not_found or None}
