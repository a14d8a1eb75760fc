"""``python -m gateway.backup create|restore``: the database and the blobs, together.

A backup is one directory::

    svc-backup-20260101T120000Z/
      manifest.json     what is in it: schemas, blob counts, pg_dump's version
      database.dump     pg_dump --format=custom of the project's schemas only
      blobs/mail/       mail over 256 KiB and JMAP uploads (DATA_DIR/blobs, or S3)
      blobs/media/      CMS media (STORAGE_LOCAL_DIR, or the S3 bucket)

Both stores are content-addressed (a blob's name is its SHA-256), so the copy
is kept in the same ``ab/cd/<sha256>`` layout as ``LocalBlobStore`` and every
blob copied is hashed again on the way (a corrupt one cannot be restored
under its name). The dump is taken first and the blobs after: rows always
commit after their blob is written, so every blob the dump refers to already
exists when the copy starts.

Restore loads the dump into an empty database (DATABASE_URL, or the embedded
one under DATA_DIR, started for the purpose) and copies the blobs into the
stores the instance is configured with, which may differ from the source's
(a local directory backed up, an S3 bucket restored, or the other way).

pg_dump and pg_restore come from ``PG_BIN_DIR`` when set, else from the
``pgserver`` wheel (the embedded server's own version), else from ``PATH``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg2

from common.blobs import BLOB_ID, BlobStore, LocalBlobStore
from common.embedded_pg import EmbeddedPostgres
from common.s3blobs import S3BlobStore
from common.settings import Settings, SettingsError, load_settings, read_str
from content.media.service import make_blob_store
from content.settings import load_content_settings
from gateway.main import all_migrations
from mta.store.raw import close_message_files, message_files

log = logging.getLogger("gateway.backup")

DUMP = "database.dump"
MANIFEST = "manifest.json"
FORMAT_VERSION = 1


class BackupError(Exception):
    """The backup or restore cannot go on; the message is one line for the operator."""


def schemas() -> list[str]:
    """The project's schemas, in dependency order; nothing else is dumped."""
    return [mset.schema for mset in all_migrations()]


def pg_tool(name: str, environ: dict[str, str] | None = None) -> str:
    """The path of ``pg_dump`` or ``pg_restore`` (PG_BIN_DIR, the pgserver wheel, PATH)."""
    env = os.environ if environ is None else environ
    candidates: list[Path] = []
    if env.get("PG_BIN_DIR"):
        candidates.append(Path(env["PG_BIN_DIR"]) / name)
    try:
        import pgserver

        candidates.append(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)
    except ImportError:  # pragma: no cover - pgserver is in requirements/base.txt
        pass
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} not found: set PG_BIN_DIR or install the PostgreSQL client")
    return found


# --- the blob stores -------------------------------------------------------


@dataclass(frozen=True)
class Stores:
    mail: BlobStore
    media: BlobStore


def instance_stores(settings: Settings) -> Stores:
    """The stores the instance these settings describe reads and writes."""
    return Stores(
        mail=message_files(settings),
        media=make_blob_store(load_content_settings(settings)),
    )


def backup_stores(root: Path) -> Stores:
    # A backup is a copy: the final fsync of each file is the operator's
    # filesystem's business, as with the dump pg_dump writes.
    return Stores(
        mail=LocalBlobStore(root / "blobs" / "mail", durable=False),
        media=LocalBlobStore(root / "blobs" / "media", durable=False),
    )


async def blob_ids(store: BlobStore) -> AsyncIterator[str]:
    """Every blob a store holds (temporary and unfinished uploads left out)."""
    if isinstance(store, LocalBlobStore):
        for path in sorted(store.root.glob("??/??/*")):
            if BLOB_ID.fullmatch(path.name) and path.is_file():
                yield path.name
        return
    if isinstance(store, S3BlobStore):
        s3 = await store.client()
        paginator = s3.get_paginator("list_objects_v2")
        async for page in paginator.paginate(Bucket=store.bucket, Prefix=store.prefix):
            for item in page.get("Contents", []):
                name = item["Key"][len(store.prefix) :]
                if BLOB_ID.fullmatch(name):
                    yield name
        return
    raise BackupError(f"cannot list a {type(store).__name__}")


async def _verified(source: BlobStore, blob_id: str) -> AsyncIterator[bytes]:
    """The blob's bytes; raises after the last one if they do not hash to its name.

    Raised inside the stream, the error reaches the target's ``put_stream``
    before it commits, so nothing of a corrupt blob is stored.
    """
    digest = hashlib.sha256()
    async for chunk in source.open(blob_id):
        digest.update(chunk)
        yield chunk
    if digest.hexdigest() != blob_id:
        raise BackupError(f"blob {blob_id} is corrupt: its bytes hash to {digest.hexdigest()}")


async def copy_blobs(
    source: BlobStore, target: BlobStore, content_types: dict[str, str] | None = None
) -> int:
    """Copy every blob of ``source`` that ``target`` lacks; return how many were copied.

    Each blob is streamed and checked against its name on the way: a blob
    whose bytes no longer match it stops the copy, and is not stored.
    """
    copied = 0
    async for blob_id in blob_ids(source):
        if await target.exists(blob_id):
            continue
        kind = (content_types or {}).get(blob_id, "application/octet-stream")
        await target.put_stream(_verified(source, blob_id), content_type=kind)
        copied += 1
    return copied


# --- the database ----------------------------------------------------------


async def _database(settings: Settings) -> tuple[str, EmbeddedPostgres | None]:
    """DATABASE_URL, or the embedded server under DATA_DIR (started, or joined if running)."""
    if settings.database_url:
        return settings.database_url, None
    pg = EmbeddedPostgres(settings.pgdata_dir)
    await asyncio.to_thread(pg.start)
    return await asyncio.to_thread(pg.ensure_database), pg


def _run(args: list[str]) -> str:
    # Our own argument list (a tool path and flags), never a shell string.
    done = subprocess.run(args, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        tool = Path(args[0]).name
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise BackupError(f"{tool} failed: {detail[-1] if detail else done.returncode}")
    return done.stdout


def dump(dsn: str, path: Path) -> None:
    args = [pg_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges"]
    args += [f"--schema={name}" for name in schemas()]
    _run([*args, f"--file={path}", f"--dbname={dsn}"])


def load(dsn: str, path: Path) -> None:
    """pg_restore into a database holding none of the project's schemas, in one transaction."""
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s) ORDER BY 1", (schemas(),)
            )
            present = [row[0] for row in cur.fetchall()]
    finally:
        conn.close()
    if present:
        raise BackupError(
            f"the database already holds schema {', '.join(present)}: restore into an empty one"
        )
    _run(
        [
            pg_tool("pg_restore"),
            "--no-owner",
            "--no-privileges",
            "--single-transaction",
            "--exit-on-error",
            f"--dbname={dsn}",
            str(path),
        ]
    )


def _media_types(dsn: str) -> dict[str, str]:
    """Each media blob's Content-Type, for an S3 target (a local store keeps none)."""
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT sha256, type FROM content.media")
            return dict(cur.fetchall())
    finally:
        conn.close()


# --- the two commands ------------------------------------------------------


async def create(settings: Settings, destination: Path) -> Path:
    """Back the instance up into a new directory under ``destination``; return it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    root = destination / f"svc-backup-{stamp}"
    if root.exists():
        raise BackupError(f"{root} already exists")
    partial = destination / f".{root.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    dsn, pg = await _database(settings)
    stores = instance_stores(settings)
    try:
        await asyncio.to_thread(dump, dsn, partial / DUMP)
        into = backup_stores(partial)
        counts = {
            "mail": await copy_blobs(stores.mail, into.mail),
            "media": await copy_blobs(stores.media, into.media),
        }
    finally:
        await stores.media.close()
        await close_message_files()
        if pg is not None:
            await asyncio.to_thread(pg.stop)
    manifest = {
        "format": FORMAT_VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "schemas": schemas(),
        "pg_dump": _run([pg_tool("pg_dump"), "--version"]).strip(),
        "blobs": counts,
    }
    (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    # Only a finished backup carries the final name.
    partial.rename(root)
    return root


def read_manifest(root: Path) -> dict[str, object]:
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise BackupError(f"{root} is not a backup: {exc}") from None
    if manifest.get("format") != FORMAT_VERSION:
        raise BackupError(f"{root}: unknown backup format {manifest.get('format')!r}")
    unknown = set(manifest.get("schemas", [])) - set(schemas())
    if unknown:
        raise BackupError(f"{root} holds schemas this version does not know: {sorted(unknown)}")
    return dict(manifest)


async def restore(settings: Settings, source: Path) -> dict[str, int]:
    """Load a backup into this instance's (empty) database and its blob stores."""
    read_manifest(source)
    dsn, pg = await _database(settings)
    stores = instance_stores(settings)
    try:
        await asyncio.to_thread(load, dsn, source / DUMP)
        media_types = await asyncio.to_thread(_media_types, dsn)
        backup = backup_stores(source)
        return {
            "mail": await copy_blobs(backup.mail, stores.mail),
            "media": await copy_blobs(backup.media, stores.media, media_types),
        }
    finally:
        await stores.media.close()
        await close_message_files()
        if pg is not None:
            await asyncio.to_thread(pg.stop)


def latest(destination: Path) -> Path:
    """The newest finished backup under ``destination``."""
    found = sorted(
        p for p in destination.glob("svc-backup-*") if re.search(r"\d{8}T\d{6}Z$", p.name)
    )
    if not found:
        raise BackupError(f"no backup under {destination}")
    return found[-1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.backup")
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("create", help="back up the database and the blobs")
    made.add_argument(
        "--to", type=Path, help="where to put it (default BACKUP_DIR or DATA_DIR/backups)"
    )
    back = commands.add_parser("restore", help="restore a backup into an empty instance")
    back.add_argument(
        "source", type=Path, help="a backup directory, or a folder of them (the newest is used)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = load_settings()
        if args.command == "create":
            destination = args.to or Path(
                read_str(settings.environ, "BACKUP_DIR", str(settings.data_dir / "backups"))
            )
            root = asyncio.run(create(settings, destination))
            print(root)
        else:
            source = args.source if (args.source / MANIFEST).exists() else latest(args.source)
            counts = asyncio.run(restore(settings, source))
            print(f"restored {source}: {counts['mail']} mail blobs, {counts['media']} media files")
    except (BackupError, SettingsError) as exc:
        print(f"backup: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
