"""`python -m gateway.backup`: a running instance backed up, restored into a fresh DATA_DIR.

The source is a real gateway against the harness's PostgreSQL with mail
(received over SMTP, one message large enough to live in the blob store),
CMS content (a published entry and a media file) and an OAuth client. The
restore goes into an empty data directory whose embedded PostgreSQL the
restore starts itself; a second gateway then serves that directory alone,
and everything is read back the way a user would: mail over JMAP, content
over delivery, the OAuth client by authenticating with its secret.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import smtplib
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from common.blobs import LocalBlobStore
from common.db import Database
from common.runtime import Runtime
from common.s3blobs import S3BlobStore
from gateway import backup
from mta.store import mailboxes
from tests.conftest import ROOT, GatewayProcess, free_port
from tests.content.factories import make_delivery_key, make_type, make_user
from tests.mail.factories import cookie, make_account, make_session
from tests.mta.jmap.conftest import make_mailbox
from tests.s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Server, s3_server

pytestmark = pytest.mark.process

MAIL = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
# Over the 256 KiB kept in PostgreSQL: this one's raw MIME is a file in DATA_DIR/blobs.
LARGE_BODY = ("line of a long report\r\n" * 14000).encode()


def backup_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.backup", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def send(port: int, to: str, subject: str, body: bytes) -> None:
    message = (
        f"From: Carol <carol@remote.test>\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '-')}@remote.test>\r\n\r\n"
    ).encode() + body
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        refused = smtp.sendmail("carol@remote.test", [to], message)
    assert refused == {}


async def jmap_messages(http: httpx.AsyncClient, basic: str, account: str) -> dict[str, str]:
    """Subject -> text body of every message in the account, over JMAP."""
    answer = await http.post(
        "/jmap",
        headers={"Authorization": basic},
        json={
            "using": MAIL,
            "methodCalls": [
                ["Email/query", {"accountId": account}, "q"],
                [
                    "Email/get",
                    {
                        "accountId": account,
                        "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"},
                        "properties": ["subject", "textBody", "bodyValues"],
                        "fetchTextBodyValues": True,
                    },
                    "g",
                ],
            ],
        },
    )
    assert answer.status_code == 200, answer.text
    name, result, _ = answer.json()["methodResponses"][1]
    assert name == "Email/get", result
    found = result["list"]
    return {
        email["subject"]: "".join(
            email["bodyValues"][part["partId"]]["value"] for part in email["textBody"]
        )
        for email in found
    }


async def make_content(http: httpx.AsyncClient, db: Database, clock: Any) -> dict[str, Any]:
    await make_type(db, clock, "post", [{"key": "body", "type": "markdown"}])
    editor = await make_user(db, clock, "editor")
    entry = await http.post(
        "/cms/api/entries",
        json={"type": "post", "title": "Kept", "status": "published", "data": {"body": "safe"}},
        headers=editor.headers,
    )
    assert entry.status_code == 201, entry.text
    media = await http.post(
        "/cms/api/media",
        files={"file": ("notes.txt", b"media bytes to keep", "text/plain")},
        headers=editor.headers,
    )
    assert media.status_code == 201, media.text
    return {
        "key": await make_delivery_key(db, clock, ["*"]),
        "slug": entry.json()["slug"],
        "sha256": media.json()["sha256"],
    }


async def make_oauth_client(http: httpx.AsyncClient, runtime: Runtime) -> dict[str, Any]:
    owner = await make_account(runtime, is_owner=True)
    session = cookie(await make_session(runtime, owner))
    made = await http.post(
        "/admin/oauth/clients",
        json={
            "name": "Reporting",
            "public": False,
            "allowed_scopes": ["openid"],
            "redirect_uris": ["https://reports.example/cb"],
        },
        headers=session,
    )
    assert made.status_code == 201, made.text
    return {**made.json(), "session": session}


async def introspect_as(http: httpx.AsyncClient, client_id: str, secret: str) -> int:
    credentials = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    answer = await http.post(
        "/oauth/introspect",
        data={"token": "not-a-token"},
        headers={"Authorization": f"Basic {credentials}"},
    )
    return answer.status_code


async def test_a_running_instance_is_backed_up_and_restored_into_a_fresh_data_directory(
    gateway_process: Any,
    database_url: str,
    runtime: Runtime,
    clock: Any,
    data_dir: Path,
    tmp_path: Path,
) -> None:
    smtp_port = free_port()
    source: GatewayProcess = gateway_process(
        env={
            "DATABASE_URL": database_url,
            "SMTP_PORT": str(smtp_port),
            "SMTP_AUTH_CHECKS": "false",
        }
    )
    alice = await make_mailbox(runtime.db, "alice@example.test")
    async with runtime.db.transaction() as conn:
        await mailboxes.ensure_defaults(conn, alice.address_id, clock.now())
    await asyncio.to_thread(send, smtp_port, alice.email, "small note", b"see you at noon\r\n")
    await asyncio.to_thread(send, smtp_port, alice.email, "long report", LARGE_BODY)
    assert list((Path(source.env["DATA_DIR"]) / "blobs").glob("??/??/*")), "no blob on disk"

    async with httpx.AsyncClient(base_url=source.base_url, timeout=30) as http:
        before = await jmap_messages(http, alice.basic, alice.address_id)
        content = await make_content(http, runtime.db, clock)
        client = await make_oauth_client(http, runtime)

    backups = tmp_path / "backups"
    made = backup_cli(source.env, "create", "--to", str(backups))
    assert made.returncode == 0, made.stderr
    backup = Path(made.stdout.strip())
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["blobs"] == {"mail": 1, "media": 1}
    assert manifest["schemas"] == ["common", "oauth", "content", "mail", "mta"]

    # A fresh data directory, no DATABASE_URL: the embedded database of a new box.
    fresh = {k: v for k, v in source.env.items() if k not in ("DATABASE_URL", "PORT", "SMTP_PORT")}
    fresh["DATA_DIR"] = str(data_dir)
    restored_run = backup_cli(fresh, "restore", str(backups))
    assert restored_run.returncode == 0, restored_run.stderr
    assert "1 mail blobs, 1 media files" in restored_run.stdout
    source.stop()

    restored = gateway_process(env={"DATA_DIR": str(data_dir), "SMTP_PORT": "0"})
    async with httpx.AsyncClient(base_url=restored.base_url, timeout=30) as http:
        after = await jmap_messages(http, alice.basic, alice.address_id)
        assert after == before
        assert after["long report"].replace("\r\n", "\n") == LARGE_BODY.decode().replace(
            "\r\n", "\n"
        )

        key = {"X-Api-Key": content["key"]}
        entry = await http.get(f"/cms/content/post/{content['slug']}", headers=key)
        assert entry.status_code == 200, entry.text
        assert (entry.json()["title"], entry.json()["data"]["body"]) == ("Kept", "safe")
        media = await http.get(f"/cms/media/files/{content['sha256']}")
        assert media.status_code == 200 and media.content == b"media bytes to keep"

        listed = await http.get("/admin/oauth/clients", headers=client["session"])
        assert listed.status_code == 200, listed.text
        assert client["client_id"] in listed.text
        assert await introspect_as(http, client["client_id"], client["client_secret"]) == 200
        assert await introspect_as(http, client["client_id"], "wrong-secret") == 401

    # Restoring over a database that holds data is refused, with nothing changed.
    again = backup_cli({**fresh, "DATA_DIR": str(data_dir)}, "restore", str(backup))
    assert again.returncode == 1
    assert "already holds schema" in again.stderr
    assert os.listdir(backups) == [backup.name]


def test_a_backup_joins_a_running_embedded_database_and_leaves_it_running(
    gateway_process: Any, data_dir: Path, tmp_path: Path
) -> None:
    """`make run`'s layout: the gateway owns the database under DATA_DIR; the backup borrows it."""
    running: GatewayProcess = gateway_process(env={"DATA_DIR": str(data_dir)})
    made = backup_cli(running.env, "create")
    assert made.returncode == 0, made.stderr
    backup_dir = Path(made.stdout.strip())
    assert backup_dir.parent == data_dir / "backups"
    assert (backup_dir / "database.dump").stat().st_size > 0
    running.wait_healthy(timeout=5)  # its database is still up
    assert running.stop() == 0


async def test_media_in_a_bucket_goes_to_a_backup_and_back_into_another_bucket(
    tmp_path: Path,
) -> None:
    """The S3 side of the copy (moto's server), and a corrupt blob refused."""

    def bucket(server: S3Server) -> S3BlobStore:
        return S3BlobStore(
            bucket=f"b-{secrets.token_hex(4)}",
            endpoint=server.endpoint,
            region=REGION,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            prefix="media/",
        )

    with s3_server() as server:
        source, target = bucket(server), bucket(server)
        for store in (source, target):
            await (await store.client()).create_bucket(Bucket=store.bucket)
        try:
            photo = await source.put(b"\x89PNG not really")
            notes = await source.put(b"plain notes")
            # An upload never finished is not a blob.
            await (await source.client()).put_object(
                Bucket=source.bucket, Key="media/.uploads/abc", Body=b"partial"
            )
            copy = backup.backup_stores(tmp_path).media
            assert await backup.copy_blobs(source, copy) == 2
            assert await backup.copy_blobs(source, copy) == 0  # already there
            types = {photo: "image/png"}
            assert await backup.copy_blobs(copy, target, types) == 2
            s3 = await target.client()
            head = await s3.head_object(Bucket=target.bucket, Key=f"media/{photo}")
            assert head["ContentType"] == "image/png"
            assert await target.get(notes) == b"plain notes"

            # A file whose bytes no longer match its name is not restored.
            assert isinstance(copy, LocalBlobStore)
            copy.path(notes).write_bytes(b"bit rot")
            await target.delete(notes)
            with pytest.raises(backup.BackupError, match=f"blob {notes} is corrupt"):
                await backup.copy_blobs(copy, target)
            assert not await target.exists(notes)
            listed = await s3.list_objects_v2(Bucket=target.bucket)
            assert [o["Key"] for o in listed["Contents"]] == [f"media/{photo}"]
        finally:
            await source.close()
            await target.close()
