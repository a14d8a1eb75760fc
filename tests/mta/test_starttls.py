"""STARTTLS is offered when SMTP_TLS_CERT/SMTP_TLS_KEY are set, and used mail says ESMTPS."""

from __future__ import annotations

import datetime as dt
import ssl
from dataclasses import replace
from pathlib import Path

import aiosmtplib
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from common.db import Database
from mta.context import MtaContext
from mta.smtp import server
from mta.store import emails
from tests.mta import factories


def self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mx.test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_starttls_then_deliver(db: Database, mta_ctx: MtaContext, tmp_path: Path) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    cert, key = self_signed(tmp_path)
    ctx = replace(mta_ctx, config=replace(mta_ctx.config, smtp_tls_cert=cert, smtp_tls_key=key))
    client_tls = ssl.create_default_context(cafile=str(cert))
    client_tls.check_hostname = False
    async with server.serve(ctx) as srv:
        client = aiosmtplib.SMTP(
            hostname="127.0.0.1",
            port=server.bound_port(srv),
            start_tls=False,
            tls_context=client_tls,
        )
        await client.connect()
        try:
            await client.ehlo(hostname="client.test")
            assert client.supports_extension("starttls")
            await client.starttls()
            await client.ehlo(hostname="client.test")
            assert not client.supports_extension("starttls")
            await client.sendmail(
                "bob@sender.test",
                ["alice@example.test"],
                b"From: bob@sender.test\r\nSubject: secret\r\n\r\nover TLS\r\n",
            )
        finally:
            await client.quit()
    async with db.connection() as conn:
        row = (await emails.for_address(conn, owner["address_id"]))[0]
    raw = await ctx.blobs.get(row["blob_id"])
    assert b"with ESMTPS id" in raw
