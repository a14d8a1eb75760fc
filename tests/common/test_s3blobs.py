"""The S3 driver against a real S3-compatible server (moto, on loopback)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest

from common import s3blobs
from common.blobs import BlobNotFound
from common.s3blobs import S3BlobStore
from tests.s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Server, s3_server


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@pytest.fixture
async def store(s3: S3Server) -> AsyncIterator[S3BlobStore]:
    blobs = S3BlobStore(
        bucket=f"b-{secrets.token_hex(4)}",
        endpoint=s3.endpoint,
        region=REGION,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
    )
    await (await blobs.client()).create_bucket(Bucket=blobs.bucket)
    yield blobs
    await blobs.close()


async def make_public(store: S3BlobStore) -> None:
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{store.bucket}/*",
            }
        ],
    }
    s3 = await store.client()
    await s3.put_bucket_policy(Bucket=store.bucket, Policy=json.dumps(policy))


async def _stream(data: bytes, step: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), step):
        yield data[i : i + step]


async def test_a_small_blob_round_trips_with_ranges_and_a_public_url(store: S3BlobStore) -> None:
    data = os.urandom(300_000)
    blob_id = await store.put_stream(_stream(data, 65536), content_type="image/png")
    assert blob_id == hashlib.sha256(data).hexdigest()
    assert await store.get(blob_id) == data
    assert b"".join([c async for c in store.open(blob_id, 1000, 1999)]) == data[1000:2000]
    assert b"".join([c async for c in store.open(blob_id, 299_990)]) == data[299_990:]
    assert await store.size(blob_id) == len(data)
    url = store.public_url(blob_id)
    assert url == f"{store.endpoint}/{store.bucket}/{blob_id}"
    # A public bucket (its policy lets anyone read) serves it at the endpoint's address.
    await make_public(store)
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.headers["Content-Type"] == "image/png"
        assert await response.read() == data


async def test_a_large_blob_goes_as_a_multipart_upload_and_leaves_no_staging_object(
    store: S3BlobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(s3blobs, "PART_SIZE", 5 * 1024 * 1024)
    data = os.urandom(11 * 1024 * 1024 + 17)
    blob_id = await store.put_stream(_stream(data, 1 << 20), content_type="application/pdf")
    assert await store.get(blob_id) == data
    s3 = await store.client()
    listed = await s3.list_objects_v2(Bucket=store.bucket)
    assert [o["Key"] for o in listed["Contents"]] == [blob_id]
    head = await s3.head_object(Bucket=store.bucket, Key=blob_id)
    assert head["ContentType"] == "application/pdf"
    assert "immutable" in head["CacheControl"]
    assert (await s3.list_multipart_uploads(Bucket=store.bucket)).get("Uploads", []) == []


async def test_a_failed_stream_stores_nothing(
    store: S3BlobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(s3blobs, "PART_SIZE", 5 * 1024 * 1024)

    async def broken() -> AsyncIterator[bytes]:
        for _ in range(6):
            yield os.urandom(1 << 20)
        raise RuntimeError("client went away")

    with pytest.raises(RuntimeError):
        await store.put_stream(broken())
    s3 = await store.client()
    assert (await s3.list_objects_v2(Bucket=store.bucket)).get("Contents", []) == []
    assert (await s3.list_multipart_uploads(Bucket=store.bucket)).get("Uploads", []) == []


async def test_missing_and_deleted_blobs(store: S3BlobStore) -> None:
    blob_id = await store.put(b"hello")
    assert await store.exists(blob_id)
    assert await store.delete(blob_id)
    assert not await store.exists(blob_id)
    assert not await store.delete(blob_id)
    with pytest.raises(BlobNotFound):
        await store.get(blob_id)
    with pytest.raises(BlobNotFound):
        await store.size("0" * 64)
