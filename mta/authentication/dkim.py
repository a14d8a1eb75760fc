"""DKIM verification (RFC 6376) with dkimpy, keys fetched through our resolver.

dkimpy's verifier asks a synchronous ``dnsfunc``; the keys are fetched first
with the async resolver and handed to it from a dict, so the event loop never
blocks on DNS.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import dkim
from dkim.util import InvalidTagValueList, parse_tag_value

from mta.authentication.dns import Resolver, TempError

MAX_SIGNATURES = 5
# Larger messages are hashed in a worker thread instead of on the event loop.
THREAD_ABOVE = 1024 * 1024


@dataclass(frozen=True)
class DkimResult:
    result: str  # pass fail neutral temperror permerror none
    domain: str = ""
    selector: str = ""
    reason: str = ""


async def verify(resolver: Resolver, raw: bytes) -> list[DkimResult]:
    """One result per DKIM-Signature (at most five), or ``[none]`` if unsigned."""
    end = raw.find(b"\r\n\r\n")
    if b"dkim-signature:" not in raw[: end if end >= 0 else len(raw)].lower():
        return [DkimResult("none")]  # skip dkimpy's header parse for unsigned mail
    try:
        signer = dkim.DKIM(raw)
    except Exception as exc:  # unparsable header section
        return [DkimResult("permerror", reason=f"message: {exc}")]
    signatures = [v for k, v in signer.headers if k.lower() == b"dkim-signature"]
    if not signatures:
        return [DkimResult("none")]
    results = []
    for idx, header in enumerate(signatures[:MAX_SIGNATURES]):
        results.append(await _verify_one(resolver, raw, idx, header))
    return results


async def _verify_one(resolver: Resolver, raw: bytes, idx: int, header: bytes) -> DkimResult:
    try:
        tags = parse_tag_value(header)
    except InvalidTagValueList as exc:
        return DkimResult("permerror", reason=f"signature: {exc}")
    domain = tags.get(b"d", b"").decode("ascii", "replace").lower()
    selector = tags.get(b"s", b"").decode("ascii", "replace")
    if not domain or not selector:
        return DkimResult("permerror", domain, selector, "signature without d= or s=")
    name = f"{selector}._domainkey.{domain}"
    try:
        txts = await resolver.txt(name)
    except TempError as exc:
        return DkimResult("temperror", domain, selector, str(exc))
    if not txts:
        return DkimResult("permerror", domain, selector, f"no key at {name}")
    key = txts[0].encode()

    def dnsfunc(_name: bytes | str, timeout: float = 5) -> bytes:
        return key

    def run() -> bool:
        # A fresh DKIM object per signature: verify() keeps state on it.
        return bool(dkim.DKIM(raw).verify(idx=idx, dnsfunc=dnsfunc))

    try:
        ok = await asyncio.to_thread(run) if len(raw) > THREAD_ABOVE else run()
    except dkim.ValidationError as exc:
        # A changed body is a signature that does not verify (fail), not a broken one.
        result = "fail" if "body hash mismatch" in str(exc) else "permerror"
        return DkimResult(result, domain, selector, str(exc))
    except Exception as exc:  # a key or signature dkimpy cannot read
        return DkimResult("permerror", domain, selector, str(exc))
    if ok:
        return DkimResult("pass", domain, selector)
    return DkimResult("fail", domain, selector, "signature did not verify")
