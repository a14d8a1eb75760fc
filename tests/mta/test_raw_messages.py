"""Raw MIME: small messages in the delivery transaction, large ones in the blob store."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.blobs import BlobNotFound, LocalBlobStore, blob_id_of
from common.clock import ManualClock
from common.db import Database
from mta.store.raw import INLINE_MAX, RawMessages


async def test_small_messages_live_and_die_with_their_transaction(
    db: Database, tmp_path: Path, clock: ManualClock
):
    files = LocalBlobStore(tmp_path)
    raw = RawMessages(db, files)
    small = b"Subject: small\r\n\r\n" + b"x" * 1000
    assert raw.inline(len(small)) and not raw.inline(INLINE_MAX + 1)

    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            blob_id = await raw.put_inline(conn, small, clock.now())
            raise RuntimeError("the batch failed")
    assert not await raw.exists(blob_id)  # rolled back with the rows it belonged to

    async with db.transaction() as conn:
        assert await raw.put_inline(conn, small, clock.now()) == blob_id_of(small)
        await raw.put_inline(conn, small, clock.now())  # same bytes again: one copy
    assert await raw.get(blob_id) == small
    assert b"".join([chunk async for chunk in raw.open(blob_id)]) == small
    assert await raw.size(blob_id) == len(small)
    assert not await files.exists(blob_id)  # never written as a file
    assert await raw.delete(blob_id)
    assert not await raw.exists(blob_id)
    with pytest.raises(BlobNotFound):
        await raw.get(blob_id)


async def test_large_messages_go_to_the_blob_store(db: Database, tmp_path: Path):
    files = LocalBlobStore(tmp_path)
    raw = RawMessages(db, files)
    large = b"Subject: large\r\n\r\n" + b"y" * (INLINE_MAX + 10)
    blob_id = await raw.put(large)
    assert await files.exists(blob_id)
    assert await raw.get(blob_id) == large
    assert await raw.size(blob_id) == len(large)
    assert await raw.exists(blob_id)
    assert await raw.delete(blob_id)
    assert not await raw.exists(blob_id)
    assert not await raw.exists("../../etc/passwd")
