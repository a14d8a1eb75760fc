"""Upload and download (streamed), Blob/copy, and another account's blob is not found."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import requests

from tests.mta.conftest import send
from tests.mta.jmap.conftest import MAIL, Mailbox, Server, make_mailbox, run


def upload(server: Server, auth: str, account: str, data: Any, kind: str = "") -> requests.Response:
    return requests.post(
        f"{server.url}/jmap/upload/{account}",
        data=data,
        headers={"Authorization": auth, "Content-Type": kind},
        timeout=30,
    )


async def test_jmapc_uploads_and_the_blob_downloads_byte_for_byte(
    jmap_server: Server, alice: Mailbox, tmp_path: Path
) -> None:
    payload = bytes(range(256)) * 4096 + b"tail"  # 1 MiB and a bit, sent chunked by jmapc
    path = tmp_path / "report.pdf"
    path.write_bytes(payload)
    client = jmap_server.client(alice.email)
    blob = await run(client.upload_blob, path)
    assert blob.id == hashlib.sha256(payload).hexdigest()
    assert blob.size == len(payload) and blob.type == "application/pdf"
    answer = await run(
        requests.get,
        f"{jmap_server.url}/jmap/download/{alice.address_id}/{blob.id}/r%C3%A9sum%C3%A9%22.pdf",
        params={"type": "application/pdf"},
        headers={"Authorization": alice.basic},
        timeout=30,
    )
    assert answer.status_code == 200 and answer.content == payload
    assert answer.headers["Content-Type"] == "application/pdf"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    disposition = answer.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="r_sum__.pdf"')
    assert "filename*=UTF-8''r%C3%A9sum%C3%A9%22.pdf" in disposition
    # A type that could run as a page in our origin is still served sandboxed.
    html = await run(
        requests.get,
        f"{jmap_server.url}/jmap/download/{alice.address_id}/{blob.id}/x.html?type=text/html",
        headers={"Authorization": alice.basic},
        timeout=30,
    )
    assert "sandbox" in html.headers["Content-Security-Policy"]


async def test_upload_over_the_limit_is_refused_and_stores_nothing(
    jmap_server: Server, alice: Mailbox, runtime: Any
) -> None:
    limit = 50 * 1024 * 1024

    def body() -> Any:  # chunked, no Content-Length: the server counts as it streams
        sent = 0
        chunk = b"x" * (1024 * 1024)
        while sent <= limit:
            sent += len(chunk)
            yield chunk

    answer = await run(upload, jmap_server, alice.basic, alice.address_id, body())
    assert answer.status_code == 413
    assert answer.json()["limit"] == "maxSizeUpload"
    assert await runtime.db.fetch_val("SELECT count(*) FROM mta.uploads") == 0
    declared = await run(
        requests.post,
        f"{jmap_server.url}/jmap/upload/{alice.address_id}",
        data=b"",
        headers={"Authorization": alice.basic, "Content-Length": str(limit + 1)},
        timeout=10,
    )
    assert declared.status_code == 413


async def test_another_accounts_blob_is_not_found_until_blob_copy(
    jmap_server: Server, alice: Mailbox, db: Any, smtp_port: int
) -> None:
    bob = await make_mailbox(db, "bob@other.test")
    blob = (
        await run(upload, jmap_server, alice.basic, alice.address_id, b"secret", "text/plain")
    ).json()
    url = f"{jmap_server.url}/jmap/download/{{}}/{blob['blobId']}/a.txt"
    as_bob = await run(
        requests.get, url.format(bob.address_id), headers={"Authorization": bob.basic}, timeout=10
    )
    assert as_bob.status_code == 404
    # Bob naming alice's account: not his, 404 as well.
    cross = await run(
        requests.get, url.format(alice.address_id), headers={"Authorization": bob.basic}, timeout=10
    )
    assert cross.status_code == 404
    # Blob/copy needs both accounts in one session: alice copies to alice (a no-op) fine,
    # and from an account she does not have: fromAccountNotFound.
    calls = [
        [
            "Blob/copy",
            {
                "fromAccountId": bob.address_id,
                "accountId": alice.address_id,
                "blobIds": [blob["blobId"]],
            },
            "0",
        ],
        [
            "Blob/copy",
            {
                "fromAccountId": alice.address_id,
                "accountId": alice.address_id,
                "blobIds": [blob["blobId"], "f" * 64],
            },
            "1",
        ],
    ]
    body = (await jmap_server.post(alice.basic, {"using": MAIL, "methodCalls": calls})).json()
    first, second = (r[1] for r in body["methodResponses"])
    assert first["type"] == "fromAccountNotFound"
    assert second["copied"] == {blob["blobId"]: blob["blobId"]}
    assert second["notCopied"] == {"f" * 64: {"type": "blobNotFound"}}
    # A delivered message's raw MIME is a blob of the recipient's account.
    message = b"From: carol@remote.test\r\nTo: alice@example.test\r\nSubject: hi\r\n\r\nbody\r\n"
    assert (await send(smtp_port, "carol@remote.test", [alice.email], message))["data"][0] == 250
    blob_id = await db.fetch_val(
        "SELECT blob_id FROM mta.emails WHERE address_id = %s", (alice.address_id,)
    )
    raw = await run(
        requests.get,
        f"{jmap_server.url}/jmap/download/{alice.address_id}/{blob_id}/m.eml",
        headers={"Authorization": alice.basic},
        timeout=10,
    )
    assert raw.status_code == 200 and raw.content.endswith(b"body\r\n")
    assert raw.headers["Content-Type"] == "message/rfc822"
