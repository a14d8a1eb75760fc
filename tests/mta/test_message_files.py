"""MAIL_BLOB_STORE: where messages over 256 KiB and JMAP uploads live."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from common.blobs import LocalBlobStore
from common.s3blobs import S3BlobStore
from common.settings import Settings, SettingsError
from mta.store.raw import close_message_files, message_files

S3 = {"S3_ACCESS_KEY": "key", "S3_SECRET_KEY": "secret", "S3_ENDPOINT": "http://s3.test"}


def settings(tmp_path: Path, **env: str) -> Settings:
    return Settings(data_dir=tmp_path, environ=MappingProxyType(env))


def test_local_is_the_default_under_data_dir(tmp_path: Path) -> None:
    store = message_files(settings(tmp_path))
    assert isinstance(store, LocalBlobStore) and store.root == tmp_path / "blobs"


async def test_s3_is_one_private_bucket_per_process(tmp_path: Path) -> None:
    env = {**S3, "MAIL_BLOB_STORE": "s3", "MAIL_S3_BUCKET": "mail", "MAIL_S3_PREFIX": "m/"}
    store = message_files(settings(tmp_path, **env))
    assert isinstance(store, S3BlobStore)
    assert (store.bucket, store.prefix, store.endpoint) == ("mail", "m/", "http://s3.test")
    assert message_files(settings(tmp_path, **env)) is store  # one client per process
    await close_message_files()
    assert message_files(settings(tmp_path, **env)) is not store
    await close_message_files()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MAIL_BLOB_STORE": "nfs"}, "MAIL_BLOB_STORE must be local or s3, got 'nfs'"),
        ({"MAIL_BLOB_STORE": "s3", **S3}, "MAIL_BLOB_STORE=s3 needs MAIL_S3_BUCKET"),
        (
            {"MAIL_BLOB_STORE": "S3", "MAIL_S3_BUCKET": "mail"},
            "MAIL_BLOB_STORE=s3 needs S3_ACCESS_KEY, S3_SECRET_KEY",
        ),
    ],
)
def test_a_bad_setting_is_one_clear_line(tmp_path: Path, env: dict[str, str], message: str):
    with pytest.raises(SettingsError) as refused:
        message_files(settings(tmp_path, **env))
    assert str(refused.value) == message
