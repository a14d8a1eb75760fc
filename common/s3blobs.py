"""The S3 driver of :class:`common.blobs.BlobStore`: any S3-compatible service.

Objects are ``<prefix><sha256>`` in one bucket, reached through aiobotocore
(a real S3 client: signing, retries, every S3-compatible server). An
endpoint URL switches to path-style addressing (``<endpoint>/<bucket>/<key>``),
which MinIO, Ceph, R2 and the test server all take.

A stream is stored without holding it in memory. Its name (the SHA-256) is
known only at the end, so:

* a blob that fits in one part (:data:`PART_SIZE`) is buffered and sent with
  one PutObject under its final key;
* a larger one goes as a multipart upload to a staging key, part by part
  (at most one part in memory), then is copied server-side to its final key
  and the staging object deleted. CopyObject takes objects up to 5 GB, the
  limit of this driver. A failure aborts the multipart upload, so nothing
  is left behind.

Objects carry their content type and ``Cache-Control: immutable`` (the key
is the hash of the bytes, so they never change), for a public bucket or CDN.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from contextlib import AsyncExitStack
from typing import Any, BinaryIO

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import ClientError

from common.blobs import CHUNK, OCTET_STREAM, BlobNotFound, _chunks, check_blob_id

# S3's smallest part but the last is 5 MiB; 8 MiB keeps the part count low.
PART_SIZE = 8 * 1024 * 1024
MAX_COPY_BYTES = 5 * 1024**3
IMMUTABLE = "public, max-age=31536000, immutable"
_MISSING = {"404", "NoSuchKey", "NotFound"}


class S3BlobStore:
    def __init__(
        self,
        *,
        bucket: str,
        endpoint: str = "",
        region: str = "",
        access_key: str,
        secret_key: str,
        public_url: str = "",
        prefix: str = "",
    ) -> None:
        self.bucket = bucket
        self.endpoint = endpoint.rstrip("/")
        self.region = region or "us-east-1"
        self.access_key = access_key
        self.secret_key = secret_key
        self.public_base = public_url.rstrip("/")
        self.prefix = prefix
        self._client: Any = None
        self._exit = AsyncExitStack()
        self._lock = asyncio.Lock()

    def key(self, blob_id: str) -> str:
        return self.prefix + check_blob_id(blob_id)

    async def client(self) -> Any:
        """One client per store, made on first use (it binds to the running loop)."""
        async with self._lock:
            if self._client is None:
                config = AioConfig(
                    s3={"addressing_style": "path" if self.endpoint else "auto"},
                    retries={"max_attempts": 3, "mode": "standard"},
                )
                self._client = await self._exit.enter_async_context(
                    get_session().create_client(
                        "s3",
                        endpoint_url=self.endpoint or None,
                        region_name=self.region,
                        aws_access_key_id=self.access_key,
                        aws_secret_access_key=self.secret_key,
                        config=config,
                    )
                )
            return self._client

    async def close(self) -> None:
        async with self._lock:
            self._client = None
            await self._exit.aclose()

    def public_url(self, blob_id: str) -> str | None:
        key = self.key(blob_id)
        if self.public_base:
            return f"{self.public_base}/{key}"
        if self.endpoint:
            return f"{self.endpoint}/{self.bucket}/{key}"
        return f"https://{self.bucket}.s3.{self.region}.amazonaws.com/{key}"

    async def put(self, data: bytes | Iterable[bytes] | BinaryIO) -> str:
        async def chunks() -> AsyncIterator[bytes]:
            for chunk in _chunks(data):
                yield chunk

        return await self.put_stream(chunks())

    async def put_stream(
        self, chunks: AsyncIterable[bytes], *, content_type: str = OCTET_STREAM
    ) -> str:
        s3 = await self.client()
        digest = hashlib.sha256()
        buffer = bytearray()
        upload: _Multipart | None = None
        try:
            async for chunk in chunks:
                digest.update(chunk)
                buffer += chunk
                while len(buffer) >= PART_SIZE:
                    if upload is None:
                        upload = await _Multipart.start(s3, self, content_type)
                    await upload.send(bytes(buffer[:PART_SIZE]))
                    del buffer[:PART_SIZE]
            blob_id = digest.hexdigest()
            if upload is None:
                await s3.put_object(
                    Bucket=self.bucket,
                    Key=self.key(blob_id),
                    Body=bytes(buffer),
                    ContentType=content_type,
                    CacheControl=IMMUTABLE,
                )
                return blob_id
            if buffer:
                await upload.send(bytes(buffer))
            await upload.finish(self.key(blob_id))
            return blob_id
        except BaseException:
            if upload is not None:
                await asyncio.shield(upload.abort())
            raise

    async def get(self, blob_id: str) -> bytes:
        return b"".join([chunk async for chunk in self.open(blob_id)])

    async def open(
        self, blob_id: str, start: int = 0, end: int | None = None
    ) -> AsyncIterator[bytes]:
        s3 = await self.client()
        extra = {}
        if start or end is not None:
            extra["Range"] = f"bytes={start}-{'' if end is None else end}"
        try:
            response = await s3.get_object(Bucket=self.bucket, Key=self.key(blob_id), **extra)
        except ClientError as exc:
            raise _not_found(exc, blob_id) from None
        body = response["Body"]
        try:
            while True:
                chunk = await body.read(CHUNK)
                if not chunk:
                    return
                yield chunk
        finally:
            body.close()

    async def exists(self, blob_id: str) -> bool:
        try:
            await self.size(blob_id)
        except BlobNotFound:
            return False
        return True

    async def size(self, blob_id: str) -> int:
        s3 = await self.client()
        try:
            head = await s3.head_object(Bucket=self.bucket, Key=self.key(blob_id))
        except ClientError as exc:
            raise _not_found(exc, blob_id) from None
        return int(head["ContentLength"])

    async def delete(self, blob_id: str) -> bool:
        if not await self.exists(blob_id):
            return False
        s3 = await self.client()
        await s3.delete_object(Bucket=self.bucket, Key=self.key(blob_id))
        return True


class _Multipart:
    """One multipart upload to a staging key, copied to its final key at the end."""

    def __init__(self, s3: Any, store: S3BlobStore, key: str, upload_id: str) -> None:
        self.s3 = s3
        self.store = store
        self.key = key
        self.upload_id = upload_id
        self.parts: list[dict[str, Any]] = []
        self.size = 0

    @classmethod
    async def start(cls, s3: Any, store: S3BlobStore, content_type: str) -> _Multipart:
        key = f"{store.prefix}.uploads/{uuid.uuid4().hex}"
        created = await s3.create_multipart_upload(
            Bucket=store.bucket, Key=key, ContentType=content_type, CacheControl=IMMUTABLE
        )
        return cls(s3, store, key, created["UploadId"])

    async def send(self, part: bytes) -> None:
        self.size += len(part)
        if self.size > MAX_COPY_BYTES:
            raise ValueError("the S3 driver stores blobs of at most 5 GB")
        number = len(self.parts) + 1
        sent = await self.s3.upload_part(
            Bucket=self.store.bucket,
            Key=self.key,
            UploadId=self.upload_id,
            PartNumber=number,
            Body=part,
        )
        self.parts.append({"PartNumber": number, "ETag": sent["ETag"]})

    async def finish(self, final_key: str) -> None:
        bucket = self.store.bucket
        await self.s3.complete_multipart_upload(
            Bucket=bucket,
            Key=self.key,
            UploadId=self.upload_id,
            MultipartUpload={"Parts": self.parts},
        )
        self.upload_id = ""
        try:
            # The copy keeps the staged object's content type and Cache-Control.
            await self.s3.copy_object(
                Bucket=bucket, Key=final_key, CopySource={"Bucket": bucket, "Key": self.key}
            )
        finally:
            await self.s3.delete_object(Bucket=bucket, Key=self.key)

    async def abort(self) -> None:
        if not self.upload_id:
            return
        # If even this fails, the bucket's lifecycle rule for incomplete uploads is the backstop.
        with contextlib.suppress(ClientError):
            await self.s3.abort_multipart_upload(
                Bucket=self.store.bucket, Key=self.key, UploadId=self.upload_id
            )


def _not_found(exc: ClientError, blob_id: str) -> Exception:
    code = str(exc.response.get("Error", {}).get("Code", ""))
    status = str(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
    if code in _MISSING or status == "404":
        return BlobNotFound(blob_id)
    return exc
