"""Blob storage: immutable byte strings addressed by their SHA-256.

One interface for everything large that does not belong in a table (raw
MIME, CMS media, JMAP uploads). A blob id is the lower-case SHA-256 hex of
its bytes, so storing the same bytes twice costs nothing and a reader can
check what it got. Drivers:

* :class:`LocalBlobStore` keeps ``<root>/ab/cd/<sha256>`` files. A put writes
  a temporary file in the same directory, fsyncs it, renames it into place
  and fsyncs the directory, so a blob whose put returned survives a crash or
  power loss (the guarantee the SMTP daemon gives before answering 250).
* :class:`common.s3blobs.S3BlobStore` keeps ``<prefix><sha256>`` objects in
  any S3-compatible bucket through aiobotocore (its own module, so the SMTP
  daemon never imports an S3 client).

Both take a stream (:meth:`BlobStore.put_stream`, an async iterator of
chunks: an upload is never whole in memory), read back a byte range
(:meth:`BlobStore.open` with ``start``/``end``, for HTTP Range requests) and
say where the public can fetch a blob (:meth:`BlobStore.public_url`, None
when the service must serve it itself).

File I/O runs in a worker thread: fsync takes milliseconds and must not
stall the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import tempfile
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from pathlib import Path
from typing import BinaryIO, Protocol

BLOB_ID = re.compile(r"^[0-9a-f]{64}$")
CHUNK = 256 * 1024
OCTET_STREAM = "application/octet-stream"


class BlobNotFound(KeyError):
    """No blob with this id is stored."""


class BlobStore(Protocol):
    async def put(self, data: bytes | Iterable[bytes] | BinaryIO) -> str: ...

    async def get(self, blob_id: str) -> bytes: ...

    async def put_stream(
        self, chunks: AsyncIterable[bytes], *, content_type: str = OCTET_STREAM
    ) -> str:
        """Store chunks as they arrive; an exception from ``chunks`` stores nothing."""
        ...

    def open(self, blob_id: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Bytes ``start`` to ``end`` inclusive (the whole blob by default), in chunks."""
        ...

    def public_url(self, blob_id: str) -> str | None:
        """Where anyone can fetch the blob, or None: the service serves it."""
        ...

    async def close(self) -> None: ...

    async def exists(self, blob_id: str) -> bool: ...

    async def size(self, blob_id: str) -> int: ...

    async def delete(self, blob_id: str) -> bool: ...


def blob_id_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_blob_id(blob_id: str) -> str:
    """Refuse anything but 64 lower-case hex digits (no path tricks)."""
    if not isinstance(blob_id, str) or not BLOB_ID.match(blob_id):
        raise BlobNotFound(blob_id)
    return blob_id


class LocalBlobStore:
    """Blobs as files under ``root`` (DATA_DIR/blobs by default)."""

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = Path(root)
        # durable=False skips fsync: only for throwaway stores (never for mail).
        self.durable = durable

    def path(self, blob_id: str) -> Path:
        check_blob_id(blob_id)
        return self.root / blob_id[:2] / blob_id[2:4] / blob_id

    async def put(self, data: bytes | Iterable[bytes] | BinaryIO) -> str:
        return await asyncio.to_thread(self._put, data)

    def _put(self, data: bytes | Iterable[bytes] | BinaryIO) -> str:
        out, tmp_name = self._begin()
        try:
            digest = hashlib.sha256()
            with out:
                for chunk in _chunks(data):
                    digest.update(chunk)
                    out.write(chunk)
                self._flush(out)
            return self._commit(tmp_name, digest.hexdigest())
        except BaseException:
            _discard(tmp_name)
            raise

    async def put_stream(
        self, chunks: AsyncIterable[bytes], *, content_type: str = OCTET_STREAM
    ) -> str:
        """Write chunks to a temporary file as they arrive, then rename it into place."""
        out, tmp_name = await asyncio.to_thread(self._begin)
        try:
            digest = hashlib.sha256()
            with out:
                async for chunk in chunks:
                    digest.update(chunk)
                    await asyncio.to_thread(out.write, chunk)
                await asyncio.to_thread(self._flush, out)
            return await asyncio.to_thread(self._commit, tmp_name, digest.hexdigest())
        except BaseException:
            await asyncio.to_thread(_discard, tmp_name)
            raise

    def _begin(self) -> tuple[BinaryIO, str]:
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".put-", dir=self.root)
        return os.fdopen(fd, "wb"), tmp_name

    def _flush(self, out: BinaryIO) -> None:
        out.flush()
        if self.durable:
            os.fsync(out.fileno())

    def _commit(self, tmp_name: str, blob_id: str) -> str:
        final = self.path(blob_id)
        if final.exists():
            # Same bytes already stored (content addressing): keep the old file.
            os.unlink(tmp_name)
            return blob_id
        # Directories made here must reach the disk too; existing ones need not
        # be fsynced again (one fsync fewer per blob once the shards exist).
        made = [d for d in (final.parent.parent, final.parent) if not d.exists()]
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp_name, final)
        if self.durable:
            _fsync_dir(final.parent)
            for directory in made:
                _fsync_dir(directory.parent)
        return blob_id

    async def get(self, blob_id: str) -> bytes:
        path = self.path(blob_id)
        try:
            return await asyncio.to_thread(path.read_bytes)
        except FileNotFoundError:
            raise BlobNotFound(blob_id) from None

    async def open(
        self, blob_id: str, start: int = 0, end: int | None = None
    ) -> AsyncIterator[bytes]:
        """Stream a blob (or its bytes ``start``..``end``) without holding it in memory."""
        path = self.path(blob_id)
        try:
            fh = await asyncio.to_thread(path.open, "rb")
        except FileNotFoundError:
            raise BlobNotFound(blob_id) from None
        try:
            if start:
                await asyncio.to_thread(fh.seek, start)
            left = None if end is None else end - start + 1
            while left is None or left > 0:
                want = CHUNK if left is None else min(CHUNK, left)
                chunk = await asyncio.to_thread(fh.read, want)
                if not chunk:
                    return
                if left is not None:
                    left -= len(chunk)
                yield chunk
        finally:
            fh.close()

    async def exists(self, blob_id: str) -> bool:
        try:
            path = self.path(blob_id)
        except BlobNotFound:
            return False
        return await asyncio.to_thread(path.exists)

    async def size(self, blob_id: str) -> int:
        path = self.path(blob_id)
        try:
            return (await asyncio.to_thread(path.stat)).st_size
        except FileNotFoundError:
            raise BlobNotFound(blob_id) from None

    async def delete(self, blob_id: str) -> bool:
        """Remove a blob; callers make sure nothing references it any more."""
        path = self.path(blob_id)
        try:
            await asyncio.to_thread(path.unlink)
        except FileNotFoundError:
            return False
        return True

    def public_url(self, blob_id: str) -> str | None:
        # Files on the service's own disk: the service serves them.
        return None

    async def close(self) -> None:
        return None


def _chunks(data: bytes | Iterable[bytes] | BinaryIO) -> Iterable[bytes]:
    if isinstance(data, bytes | bytearray | memoryview):
        yield bytes(data)
        return
    read = getattr(data, "read", None)
    if read is not None:
        while True:
            chunk = read(CHUNK)
            if not chunk:
                return
            yield chunk
        return
    yield from data  # type: ignore[misc]


def _discard(tmp_name: str) -> None:
    if os.path.exists(tmp_name):
        os.unlink(tmp_name)


def _fsync_dir(path: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
