"""The local blob store: content addressing, streaming, durability habits."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from common.blobs import BlobNotFound, LocalBlobStore


async def test_put_returns_sha256_and_get_reads_it_back(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path / "blobs")
    blob_id = await store.put(b"hello world")
    assert blob_id == hashlib.sha256(b"hello world").hexdigest()
    assert await store.get(blob_id) == b"hello world"
    assert await store.exists(blob_id)
    assert await store.size(blob_id) == 11
    # Sharded path, no temporary file left behind.
    assert store.path(blob_id).parent.parent.parent == tmp_path / "blobs"
    assert not [p for p in (tmp_path / "blobs").iterdir() if p.name.startswith(".put-")]


async def test_same_bytes_are_stored_once(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    first = await store.put(b"x" * 1000)
    second = await store.put(io.BytesIO(b"x" * 1000))
    third = await store.put([b"x" * 500, b"x" * 500])
    assert first == second == third
    assert store.path(first).read_bytes() == b"x" * 1000


async def test_open_streams_large_blobs_in_chunks(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    data = bytes(range(256)) * 4096  # 1 MiB
    blob_id = await store.put(data)
    chunks = [chunk async for chunk in store.open(blob_id)]
    assert len(chunks) > 1
    assert b"".join(chunks) == data


async def test_missing_and_malformed_ids(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    missing = "0" * 64
    assert not await store.exists(missing)
    assert not await store.exists("../../etc/passwd")
    with pytest.raises(BlobNotFound):
        await store.get(missing)
    with pytest.raises(BlobNotFound):
        await store.get("../secret")
    with pytest.raises(BlobNotFound):
        [c async for c in store.open(missing)]


async def test_delete(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    blob_id = await store.put(b"gone soon")
    assert await store.delete(blob_id)
    assert not await store.exists(blob_id)
    assert not await store.delete(blob_id)
