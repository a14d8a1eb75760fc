"""The media library through HTTP, on the local driver and on S3 (moto on loopback).

Real files go up as multipart bodies (a PNG drawn with Pillow, a PDF, a file
one byte over MAX_UPLOAD_BYTES, a PDF that calls itself a PNG) and come back
byte for byte, ranges included: from the service's file route, and on S3
from the bucket's own object address.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import aiohttp
import boto3
import pytest
from PIL import Image

from common.settings import Settings
from content.media.service import resolve_media_urls
from tests.conftest import TEST_SECRET
from tests.content.factories import make_type
from tests.s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Server, s3_server

LIMIT = 100_000
PUBLIC_URL = "http://localhost:4300"
PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)


def png(width: int = 40, height: int = 30) -> bytes:
    out = io.BytesIO()
    # Noise, so the PNG does not compress to a few bytes.
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@pytest.fixture
def driver(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "local")


@pytest.fixture
def bucket(driver: str, request: pytest.FixtureRequest) -> str | None:
    """A fresh bucket on the moto server for the s3 drivers: public, or private."""
    if not driver.startswith("s3"):
        return None
    server: S3Server = request.getfixturevalue("s3")
    name = f"media-{secrets.token_hex(4)}"
    client = boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    client.create_bucket(Bucket=name)
    if driver == "s3-private":
        return name
    statement = {
        "Effect": "Allow",
        "Principal": "*",
        "Action": "s3:GetObject",
        "Resource": f"arn:aws:s3:::{name}/*",
    }
    policy = {"Version": "2012-10-17", "Statement": [statement]}
    client.put_bucket_policy(Bucket=name, Policy=json.dumps(policy))
    return name


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, driver: str, bucket: str | None, request: Any
) -> Settings:
    env = {"MAX_UPLOAD_BYTES": str(LIMIT), "STORAGE_LOCAL_DIR": str(tmp_path / "media")}
    if bucket is not None:
        env.update(request.getfixturevalue("s3").env(bucket))
    if driver == "s3-private":
        # A private bucket is served through the service's own file route.
        env["S3_PUBLIC_URL"] = f"{PUBLIC_URL}/media/files"
    return Settings(
        port=0,
        public_url=PUBLIC_URL,
        database_url=database_url,
        secret=TEST_SECRET,
        app_env="test",
        data_dir=tmp_path / "var",
        run_workers=False,
        environ=MappingProxyType(env),
    )


def form(
    data: bytes,
    filename: str = "file.bin",
    content_type: str = "application/octet-stream",
    **text: str,
) -> aiohttp.FormData:
    body = aiohttp.FormData()
    for name, value in text.items():
        body.add_field(name, value)
    body.add_field("file", data, filename=filename, content_type=content_type)
    return body


async def upload(cms: Any, who: Any, data: bytes, **kwargs: Any) -> Any:
    response = await cms.post("/api/media", data=form(data, **kwargs), headers=who.headers)
    return response


async def uploaded(cms: Any, who: Any, data: bytes, **kwargs: Any) -> dict[str, Any]:
    response = await upload(cms, who, data, **kwargs)
    assert response.status == 201, await response.text()
    return await response.json()  # type: ignore[no-any-return]


def stored_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@dataclass
class Fetched:
    status: int
    headers: Mapping[str, str]
    body: bytes


async def fetch_url(cms: Any, url: str, headers: dict[str, str] | None = None) -> Fetched:
    """GET a media URL: the service's own route through the test client, else the network."""
    if url.startswith(PUBLIC_URL):
        response = await cms.get(url.removeprefix(PUBLIC_URL), headers=headers)
        return Fetched(response.status, response.headers, await response.read())
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        return Fetched(response.status, response.headers, await response.read())


both_drivers = pytest.mark.parametrize("driver", ["local", "s3"], indirect=True)


# --- uploads and reading back ----------------------------------------------------


@both_drivers
async def test_an_image_is_recorded_and_read_back_byte_for_byte_ranges_included(
    cms: Any, team: dict[str, Any], driver: str, bucket: str | None
) -> None:
    data = png(40, 30)
    media = await uploaded(
        cms,
        team["author"],
        data,
        filename="../../etc/hero.png",
        content_type="image/png",
        alt="A hero",
        caption="Taken at dawn",
        folder="/blog/2026/",
    )
    assert media["type"] == "image/png"
    assert (media["width"], media["height"]) == (40, 30)
    assert media["size"] == len(data)
    assert media["sha256"] == hashlib.sha256(data).hexdigest()
    assert media["filename"] == "hero.png"
    assert (media["alt"], media["caption"], media["folder"]) == (
        "A hero",
        "Taken at dawn",
        "blog/2026",
    )
    if driver == "s3":
        assert media["url"].startswith("http://127.0.0.1:")
        assert f"/{bucket}/{media['sha256']}" in media["url"]
    else:
        assert media["url"] == f"{PUBLIC_URL}{'/media/files/'}{media['sha256']}"

    whole = await fetch_url(cms, media["url"])
    assert whole.status == 200
    assert whole.body == data
    assert whole.headers["Content-Type"] == "image/png"
    part = await fetch_url(cms, media["url"], {"Range": "bytes=10-99"})
    assert part.status == 206
    assert part.body == data[10:100]
    assert part.headers["Content-Range"] == f"bytes 10-99/{len(data)}"

    # Through the service (how a private bucket is served), whatever the driver.
    own = f"/media/files/{media['sha256']}"
    served = await cms.get(own)
    assert served.status == 200
    assert await served.read() == data
    assert served.headers["ETag"] == f'"{media["sha256"]}"'
    assert served.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert served.headers["Accept-Ranges"] == "bytes"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    tail = await cms.get(own, headers={"Range": "bytes=-7"})
    assert tail.status == 206
    assert await tail.read() == data[-7:]
    rest = await cms.get(own, headers={"Range": f"bytes={len(data) - 5}-"})
    assert (rest.status, await rest.read()) == (206, data[-5:])
    beyond = await cms.get(own, headers={"Range": f"bytes={len(data)}-"})
    assert beyond.status == 416
    assert beyond.headers["Content-Range"] == f"bytes */{len(data)}"
    assert (await beyond.json())["code"] == "RANGE_NOT_SATISFIABLE"
    several = await cms.get(own, headers={"Range": "bytes=0-1,5-6"})
    assert (several.status, await several.read()) == (200, data)
    stale = await cms.get(own, headers={"Range": "bytes=0-1", "If-Range": '"other"'})
    assert (stale.status, await stale.read()) == (200, data)
    cached = await cms.get(own, headers={"If-None-Match": served.headers["ETag"]})
    assert cached.status == 304
    head = await cms.head(own, headers={"Range": "bytes=0-9"})
    assert (head.status, head.headers["Content-Length"]) == (206, "10")


@both_drivers
async def test_a_pdf_is_stored_as_a_pdf_without_dimensions(
    cms: Any, team: dict[str, Any], driver: str
) -> None:
    media = await uploaded(cms, team["editor"], PDF, filename="terms.pdf")
    assert (media["type"], media["width"], media["height"]) == ("application/pdf", None, None)
    response = await fetch_url(cms, media["url"])
    assert response.body == PDF
    assert response.headers["Content-Type"] == "application/pdf"


@both_drivers
async def test_a_file_that_lies_about_its_type_is_stored_as_what_it_is(
    cms: Any, team: dict[str, Any], driver: str
) -> None:
    media = await uploaded(cms, team["editor"], PDF, filename="photo.png", content_type="image/png")
    assert media["type"] == "application/pdf"
    assert media["filename"] == "photo.png"
    assert (await fetch_url(cms, media["url"])).body == PDF


@both_drivers
async def test_a_file_one_byte_over_the_limit_is_refused_and_nothing_is_kept(
    cms: Any, team: dict[str, Any], driver: str, bucket: str | None, tmp_path: Path, request: Any
) -> None:
    response = await upload(cms, team["editor"], os.urandom(LIMIT + 1), filename="big.bin")
    assert response.status == 413
    body = await response.json()
    assert body["code"] == "PAYLOAD_TOO_LARGE"
    assert body["details"] == {"maxBytes": LIMIT}
    listed = await cms.get("/api/media", headers=team["editor"].headers)
    assert (await listed.json())["meta"]["total"] == 0
    if driver == "s3":
        server: S3Server = request.getfixturevalue("s3")
        client = boto3.client(
            "s3",
            endpoint_url=server.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )
        assert client.list_objects_v2(Bucket=bucket).get("Contents", []) == []
        assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    else:
        assert stored_files(tmp_path / "media") == []
    # Exactly the limit is taken.
    await uploaded(cms, team["editor"], os.urandom(LIMIT), filename="fits.bin")


async def _raw_request(cms: Any, head: bytes, body: bytes) -> bytes:
    """Send a request over a socket without finishing its body; the answer's first line."""
    reader, writer = await asyncio.open_connection(cms.server.host, cms.server.port)
    try:
        writer.write(head + body)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout=10)
        rest = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
        return line + rest
    finally:
        writer.close()


async def test_the_limit_is_enforced_before_the_body_is_read_past_it(
    cms: Any, team: dict[str, Any]
) -> None:
    token = team["editor"].token
    boundary = "b0undary"
    preamble = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=file; filename=x.bin\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    # A declared length far over the limit: refused before a byte of body is read.
    head = (
        f"POST /api/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {50 * 1024 * 1024}\r\n\r\n"
    ).encode()
    answer = await _raw_request(cms, head, preamble)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    # Chunked, no length: the answer comes once the limit is passed, though the
    # client has not finished (it never sends the closing boundary).
    head = (
        f"POST /api/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    payload = preamble + b"x" * (LIMIT + 50_000)
    chunk = f"{len(payload):x}\r\n".encode() + payload + b"\r\n"
    answer = await _raw_request(cms, head, chunk)
    assert answer.startswith(b"HTTP/1.1 413"), answer


async def test_a_body_cut_short_or_without_a_boundary_is_a_400_and_keeps_nothing(
    cms: Any, team: dict[str, Any], tmp_path: Path
) -> None:
    token = team["editor"].token
    cut = b"--b0\r\nContent-Disposition: form-data; name=file; filename=x.pdf\r\n\r\n" + PDF
    for body in (cut, b"no boundary anywhere"):
        head = (
            f"POST /api/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: multipart/form-data; boundary=b0\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        answer = await _raw_request(cms, head, body)
        assert answer.startswith(b"HTTP/1.1 400"), answer
    assert stored_files(tmp_path / "media") == []


# --- the record --------------------------------------------------------------------


async def test_upload_needs_media_manage_and_a_multipart_file(
    cms: Any, team: dict[str, Any]
) -> None:
    assert (await cms.post("/api/media", data=form(PDF))).status == 401
    refused = await upload(cms, team["viewer"], PDF)
    assert refused.status == 403
    assert (await refused.json())["details"] == {"permission": "media.manage"}
    as_json = await cms.post("/api/media", json={"file": "x"}, headers=team["author"].headers)
    assert as_json.status == 415
    no_file = aiohttp.FormData(default_to_multipart=True)
    no_file.add_field("alt", "just text")
    missing = await cms.post("/api/media", data=no_file, headers=team["author"].headers)
    assert missing.status == 400
    assert (await missing.json())["details"]["fields"][0]["key"] == "file"
    empty = await upload(cms, team["author"], b"")
    assert (await empty.json())["details"]["fields"][0] == {"key": "file", "message": "is empty"}


async def test_alt_caption_and_folder_are_edited_listed_and_searched(
    cms: Any, team: dict[str, Any], runtime: Any
) -> None:
    editor = team["editor"]
    ids = []
    for i, (name, folder) in enumerate(
        [("cat.png", "pets"), ("dog.png", "pets"), ("report.pdf", "docs/2026")]
    ):
        data = png(8 + i, 8) if name.endswith(".png") else PDF
        ids.append((await uploaded(cms, editor, data, filename=name, folder=folder))["id"])
        runtime.clock.advance(seconds=1)
    changed = await cms.patch(
        f"/api/media/{ids[0]}",
        json={"alt": "A sleepy cat", "caption": "On the sofa", "folder": "animals"},
        headers=editor.headers,
    )
    assert changed.status == 200, await changed.text()
    assert (await changed.json())["folder"] == "animals"
    bad = await cms.patch(f"/api/media/{ids[0]}", json={"url": "x"}, headers=editor.headers)
    assert (await bad.json())["details"]["fields"][0]["key"] == "url"

    async def listed(query: str) -> tuple[list[str], dict[str, int]]:
        response = await cms.get(f"/api/media?{query}", headers=team["viewer"].headers)
        assert response.status == 200, await response.text()
        body = await response.json()
        return [m["id"] for m in body["data"]], body["meta"]

    assert await listed("") == (ids[::-1], {"total": 3, "offset": 0, "limit": 20})
    assert (await listed("limit=1&offset=1"))[0] == [ids[1]]
    assert (await listed("search=sleepy"))[0] == [ids[0]]  # alt text
    assert (await listed("search=SOFA"))[0] == [ids[0]]  # caption
    assert (await listed("search=report"))[0] == [ids[2]]  # filename
    assert (await listed("search=docs"))[0] == [ids[2]]  # folder
    assert (await listed("folder=pets"))[0] == [ids[1]]
    assert (await listed("type=image/"))[0] == [ids[1], ids[0]]
    assert (await listed("search=100%25"))[0] == []
    actions = await runtime.db.fetch_all(
        "SELECT action FROM content.activity WHERE subject_kind = 'media' ORDER BY id"
    )
    assert [a["action"] for a in actions] == ["media.created"] * 3 + ["media.updated"]


# --- media and gallery fields ---------------------------------------------------------


@pytest.fixture
async def post_type(runtime: Any) -> dict[str, Any]:
    return await make_type(
        runtime.db,
        runtime.clock,
        "post",
        [
            {"key": "heroImage", "type": "media"},
            {"key": "photos", "type": "gallery"},
            {"key": "blocks", "type": "list", "fields": [{"key": "picture", "type": "media"}]},
        ],
    )


async def test_media_fields_take_only_image_media_and_name_the_key(
    cms: Any, team: dict[str, Any], post_type: dict[str, Any]
) -> None:
    editor = team["editor"]
    image = (await uploaded(cms, editor, png(), filename="a.png"))["id"]
    pdf = (await uploaded(cms, editor, PDF, filename="a.pdf"))["id"]
    liar = (await uploaded(cms, editor, PDF, filename="b.png", content_type="image/png"))["id"]
    data = {
        "heroImage": liar,
        "photos": [image, "nope", pdf],
        "blocks": [{"picture": image}, {"picture": "gone"}],
    }
    refused = await cms.post(
        "/api/entries", json={"type": "post", "title": "T", "data": data}, headers=editor.headers
    )
    assert refused.status == 400
    fields = {f["key"]: f["message"] for f in (await refused.json())["details"]["fields"]}
    assert fields == {
        "heroImage": "must be an image, not application/pdf (b.png)",
        "photos.1": "no media 'nope' exists",
        "photos.2": "must be an image, not application/pdf (a.pdf)",
        "blocks.1.picture": "no media 'gone' exists",
    }
    good = {"heroImage": image, "photos": [image, image], "blocks": [{"picture": image}]}
    created = await cms.post(
        "/api/entries", json={"type": "post", "title": "T", "data": good}, headers=editor.headers
    )
    assert created.status == 201, await created.text()
    entry_id = (await created.json())["id"]
    patched = await cms.patch(
        f"/api/entries/{entry_id}", json={"data": {"heroImage": pdf}}, headers=editor.headers
    )
    assert (await patched.json())["details"]["fields"][0]["key"] == "heroImage"


async def test_media_in_use_is_not_deleted_and_lists_who_uses_it(
    cms: Any, team: dict[str, Any], post_type: dict[str, Any], settings: Settings
) -> None:
    editor = team["editor"]
    data = png()
    media = await uploaded(cms, editor, data, filename="a.png")
    twin = await uploaded(cms, editor, data, filename="same-bytes.png")
    created = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "Uses it", "data": {"photos": [media["id"]]}},
        headers=editor.headers,
    )
    entry_id = (await created.json())["id"]
    assert (await cms.delete(f"/api/entries/{entry_id}", headers=editor.headers)).status == 200
    refused = await cms.delete(f"/api/media/{media['id']}", headers=editor.headers)
    assert refused.status == 409
    body = await refused.json()
    assert body["code"] == "MEDIA_IN_USE"
    assert body["details"]["referrers"] == [
        {"id": entry_id, "type": "post", "title": "Uses it", "trashed": True, "keys": ["photos.0"]}
    ]
    purged = await cms.delete(f"/api/trash/{entry_id}", headers=editor.headers)
    assert purged.status in (200, 204), await purged.text()
    deleted = await cms.delete(f"/api/media/{media['id']}", headers=editor.headers)
    assert deleted.status == 200, await deleted.text()
    assert (await cms.get(f"/api/media/{media['id']}", headers=editor.headers)).status == 404
    # The twin holds the same bytes: they stay until the last row goes.
    own = f"/media/files/{media['sha256']}"
    assert (await cms.get(own)).status == 200
    assert (await cms.delete(f"/api/media/{twin['id']}", headers=editor.headers)).status == 200
    assert (await cms.get(own)).status == 404
    assert stored_files(Path(settings.environ["STORAGE_LOCAL_DIR"])) == []


@pytest.mark.parametrize("driver", ["s3-private"], indirect=True)
async def test_a_private_bucket_is_served_through_the_service(
    cms: Any, team: dict[str, Any], bucket: str, request: Any
) -> None:
    data = png(20, 20)
    media = await uploaded(cms, team["editor"], data, filename="p.png")
    assert media["url"] == f"{PUBLIC_URL}/media/files/{media['sha256']}"
    server: S3Server = request.getfixturevalue("s3")
    direct = await fetch_url(cms, f"{server.endpoint}/{bucket}/{media['sha256']}")
    assert direct.status == 403  # the bucket itself refuses anonymous reads
    whole = await fetch_url(cms, media["url"])
    assert (whole.status, whole.body) == (200, data)
    part = await fetch_url(cms, media["url"], {"Range": "bytes=0-15"})
    assert (part.status, part.body) == (206, data[:16])


async def test_resolve_media_urls_answers_the_ids_that_exist(
    cms: Any, team: dict[str, Any], runtime: Any
) -> None:
    media = await uploaded(cms, team["editor"], png(), filename="logo.png")
    async with runtime.db.connection() as conn:
        urls = await resolve_media_urls(conn, [media["id"], "gone", media["id"]])
    assert urls == {media["id"]: media["url"]}
