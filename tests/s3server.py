"""A real S3-compatible server on loopback for the tests: moto in server mode.

Not a mock of the client: the S3 driver speaks HTTP to it through aiobotocore
(signing, multipart, ranges), as it would to MinIO or AWS.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from moto.server import ThreadedMotoServer

from tests.conftest import free_port

ACCESS_KEY = "test-access"
SECRET_KEY = "test-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    endpoint: str

    def env(self, bucket: str) -> dict[str, str]:
        """The CMS's S3 variables for a bucket on this server."""
        return {
            "STORAGE_DRIVER": "s3",
            "S3_ENDPOINT": self.endpoint,
            "S3_BUCKET": bucket,
            "S3_REGION": REGION,
            "S3_ACCESS_KEY": ACCESS_KEY,
            "S3_SECRET_KEY": SECRET_KEY,
        }


@contextmanager
def s3_server() -> Iterator[S3Server]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield S3Server(endpoint=f"http://127.0.0.1:{port}")
    finally:
        server.stop()
