"""The raw MIME of stored mail: small messages in PostgreSQL, large ones in the blob store.

A delivery's message must be durable before its 250. In the file blob store
that is a file fsync and a directory fsync per message, plus a worker
thread: about 1 ms of CPU and several of waiting, for every message. Up to
``INLINE_MAX`` bytes (nearly all mail) the message is instead inserted in the
delivery transaction (``put_inline``), so the group commit's one WAL flush
covers it with its rows, and a crash can never leave a blob without rows or
rows without their blob. Larger messages go to the blob store first, as
before. Stalwart keeps small blobs in its data store for the same reason.

:class:`RawMessages` is a :class:`common.blobs.BlobStore`: readers, the
blob collector and tests ask it by blob id and never need to know where a
message lives.

Where the larger messages (and JMAP uploads) live is ``MAIL_BLOB_STORE``:
``local`` (DATA_DIR/blobs, the default) or ``s3``, a private bucket
(``MAIL_S3_BUCKET``, never the CMS's public one) on the S3 server the
``S3_*`` variables name, so several machines need no shared directory
(docs/deploy.md, "Blobs").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import datetime
from typing import Any, BinaryIO

from common.blobs import BlobNotFound, BlobStore, LocalBlobStore, blob_id_of, check_blob_id
from common.db import Conn, Database, Prepared, execute, fetch_val
from common.runtime import Runtime
from common.settings import Settings, SettingsError, read_str
from mta.store.batch import deferred_for

INLINE_MAX = 256 * 1024

_PUT = Prepared(
    """
    INSERT INTO mta.inline_blobs (blob_id, data, created_at)
    VALUES (%(id)s, %(data)s, %(now)s)
    ON CONFLICT (blob_id) DO NOTHING
    """
)

# A delivery batch's messages in one statement: a fragment of the batch's flush
# (mta/store/counters.py).
PUT_MANY = """
    INSERT INTO mta.inline_blobs (blob_id, data, created_at)
    SELECT * FROM unnest(%(blob_ids)s::text[], %(blob_data)s::bytea[],
                         %(blob_now)s::timestamptz[])
    ON CONFLICT (blob_id) DO NOTHING
"""


def put_params(blobs: dict[str, tuple[bytes, datetime]]) -> dict[str, list[Any]]:
    ids = sorted(blobs)
    return {
        "blob_ids": ids,
        "blob_data": [blobs[i][0] for i in ids],
        "blob_now": [blobs[i][1] for i in ids],
    }


# One S3 store per process and bucket: its client binds to the running loop
# and is closed once, by close_message_files(), when the process stops.
_S3_STORES: dict[tuple[str, ...], BlobStore] = {}


def message_files(settings: Settings) -> BlobStore:
    """The store MAIL_BLOB_STORE names: DATA_DIR/blobs, or a private S3 bucket."""
    env = settings.environ
    kind = read_str(env, "MAIL_BLOB_STORE", "local").lower()
    if kind == "local":
        return LocalBlobStore(settings.blob_dir)
    if kind != "s3":
        raise SettingsError(f"MAIL_BLOB_STORE must be local or s3, got {kind!r}")
    names = ("MAIL_S3_BUCKET", "S3_ACCESS_KEY", "S3_SECRET_KEY")
    missing = [name for name in names if not read_str(env, name)]
    if missing:
        raise SettingsError(f"MAIL_BLOB_STORE=s3 needs {', '.join(missing)}")
    config = tuple(
        read_str(env, name) for name in (*names, "S3_ENDPOINT", "S3_REGION", "MAIL_S3_PREFIX")
    )
    store = _S3_STORES.get(config)
    if store is None:
        # Imported only here: a deployment with local blobs loads no S3 client.
        from common.s3blobs import S3BlobStore

        bucket, access_key, secret_key, endpoint, region, prefix = config
        store = _S3_STORES[config] = S3BlobStore(
            bucket=bucket,
            endpoint=endpoint,
            region=region,
            access_key=access_key,
            secret_key=secret_key,
            prefix=prefix,
        )
    return store


async def close_message_files() -> None:
    """Close this process's S3 clients (nothing to do for local blobs)."""
    while _S3_STORES:
        _, store = _S3_STORES.popitem()
        await store.close()


class RawMessages:
    def __init__(self, db: Database, files: BlobStore) -> None:
        self.db = db
        self.files = files

    @classmethod
    def of(cls, runtime: Runtime) -> RawMessages:
        """The raw messages of this runtime's database and MAIL_BLOB_STORE."""
        return cls(runtime.db, message_files(runtime.settings))

    @staticmethod
    def inline(size: int) -> bool:
        return size <= INLINE_MAX

    async def put_inline(self, conn: Conn, data: bytes, now: datetime) -> str:
        """Store ``data`` in the caller's transaction; durable when it commits.

        In a delivery group commit the row waits for the batch's flush (one
        statement for the batch, still before its COMMIT)."""
        blob_id = blob_id_of(data)
        batch = deferred_for(conn)
        if batch is not None:
            batch.blobs.setdefault(blob_id, (data, now))
            return blob_id
        await _PUT.execute(conn, {"id": blob_id, "data": data, "now": now})
        return blob_id

    async def put(self, data: bytes | Iterable[bytes] | BinaryIO) -> str:
        return await self.files.put(data)

    async def _inline(self, blob_id: str) -> bytes | None:
        check_blob_id(blob_id)
        async with self.db.connection() as conn:
            data = await fetch_val(
                conn, "SELECT data FROM mta.inline_blobs WHERE blob_id = %s", (blob_id,)
            )
        return None if data is None else bytes(data)

    async def get(self, blob_id: str) -> bytes:
        data = await self._inline(blob_id)
        return data if data is not None else await self.files.get(blob_id)

    async def open(self, blob_id: str) -> AsyncIterator[bytes]:
        data = await self._inline(blob_id)
        if data is not None:
            yield data
            return
        async for chunk in self.files.open(blob_id):
            yield chunk

    async def exists(self, blob_id: str) -> bool:
        try:
            return await self._inline(blob_id) is not None or await self.files.exists(blob_id)
        except BlobNotFound:
            return False

    async def size(self, blob_id: str) -> int:
        check_blob_id(blob_id)
        async with self.db.connection() as conn:
            size = await fetch_val(
                conn,
                "SELECT octet_length(data) FROM mta.inline_blobs WHERE blob_id = %s",
                (blob_id,),
            )
        return int(size) if size is not None else await self.files.size(blob_id)

    async def delete(self, blob_id: str) -> bool:
        check_blob_id(blob_id)
        async with self.db.connection() as conn:
            removed = await execute(
                conn, "DELETE FROM mta.inline_blobs WHERE blob_id = %s", (blob_id,)
            )
        return bool(removed) | await self.files.delete(blob_id)
