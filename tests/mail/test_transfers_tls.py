"""Transfers over implicit TLS and STARTTLS, from a Dovecot with a certificate of a test CA.

The certificate is checked: trusted through TRANSFER_TLS_CA_FILE the imports
complete; without it the transfer fails with the TLS error and the password
erased.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from ipaddress import IPv4Address
from pathlib import Path
from types import MappingProxyType

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from common.settings import Settings
from tests.mail.factories import signed_in
from tests.mail.imap_server import ImapServer
from tests.mail.transfer_fixtures import (
    SOURCE_PASSWORD,
    dovecot,
    make_destination,
    message,
    start_body,
    transfer,
)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(CA certificate, server certificate for 127.0.0.1, server key) as PEM files."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("transfers test CA"))
        .issuer_name(_name("transfers test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(IPv4Address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = (folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture(scope="module")
def certificates() -> Iterator[tuple[Path, Path, Path]]:
    folder = Path(tempfile.mkdtemp(prefix="transfers-tls-"))
    try:
        yield make_certificates(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def imap(certificates: tuple[Path, Path, Path]) -> Iterator[ImapServer]:
    _ca, cert, key = certificates
    server_iter = dovecot((cert, key))
    server = next(server_iter)
    server.add_user("tess", SOURCE_PASSWORD)
    for n in range(3):
        server.append("tess", "INBOX", message(f"secure {n}"))
    yield server
    next(server_iter, None)


@pytest.fixture
def settings(settings: Settings, certificates: tuple[Path, Path, Path]) -> Settings:
    env = {
        **settings.environ,
        "TRANSFER_ALLOW_PRIVATE": "true",
        "TRANSFER_TLS_CA_FILE": str(certificates[0]),
    }
    return replace(settings, environ=MappingProxyType(env))


@pytest.mark.parametrize("mode", ["implicit", "starttls"])
async def test_imports_over_tls_with_the_certificate_checked(client, runtime, imap, mode):
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    port = imap.tls_port if mode == "implicit" else imap.port
    body = start_body(address_id, imap, "tess", tls=mode, port=port)
    done = await transfer(client, runtime, body, headers)
    assert done["state"] == "completed", done["error"]
    assert done["progress"]["messages_done"] == 3


async def test_an_untrusted_certificate_fails_the_transfer(make_client, runtime, imap):
    client = await make_client({"TRANSFER_ALLOW_PRIVATE": "true"})  # no CA file: system trust
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    body = start_body(address_id, imap, "tess", tls="implicit", port=imap.tls_port)
    done = await transfer(client, runtime, body, headers)
    assert done["state"] == "failed"
    assert done["error"].startswith(f"TLS with 127.0.0.1:{imap.tls_port} failed")
    assert "certificate verify failed" in done["error"].lower()
    assert (
        await runtime.db.fetch_val(
            "SELECT password_sealed FROM mail.transfers WHERE id = %s", (done["id"],)
        )
        is None
    )
