"""The certificate submission (and inbound STARTTLS) present.

Production names its files (TLS_CERT_FILE/TLS_KEY_FILE, or SMTP_TLS_CERT/KEY).
Without them a self-signed certificate for SMTP_HOSTNAME is generated once
under DATA_DIR/tls and kept (so clients that pinned it keep trusting it);
outside development that is logged as a warning: mail clients will complain.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import ipaddress
import logging
import os
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

log = logging.getLogger(__name__)

CERT_NAME = "smtp-selfsigned.crt"
KEY_NAME = "smtp-selfsigned.key"


def self_signed(directory: Path, hostname: str) -> tuple[Path, Path]:
    """(cert, key) under ``directory``, generated on first use.

    Several processes start on one DATA_DIR at once (``--workers``, or
    ``python -m mta pop3`` beside ``python -m mta managesieve``): without a
    lock two of them generated at the same time, each replacing the other's
    files, and one loaded a key that did not match its certificate. The
    first to take the lock generates; the others wait and read its pair.
    """
    cert_path, key_path = directory / CERT_NAME, directory / KEY_NAME
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (cert_path.exists() and key_path.exists()):
            _generate(cert_path, key_path, hostname)
    return cert_path, key_path


def _generate(cert_path: Path, key_path: Path, hostname: str) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    alt: list[x509.GeneralName] = [x509.DNSName(hostname)]
    with contextlib.suppress(ValueError):
        alt.append(x509.IPAddress(ipaddress.ip_address(hostname)))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .sign(key, hashes.SHA256())
    )
    # The key first, private from its first byte; then the certificate, each
    # whole or absent (the existence check above reads without the lock).
    key_tmp = key_path.with_name(key_path.name + ".tmp")
    fd = os.open(key_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    key_tmp.replace(key_path)
    cert_tmp = cert_path.with_name(cert_path.name + ".tmp")
    cert_tmp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    cert_tmp.replace(cert_path)


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert), str(key))
    return context
