"""Apple configuration profiles (``.mobileconfig``): one tap sets up Mail on iOS, iPadOS and macOS.

Apple's Mail reads neither Thunderbird's autoconfig nor Microsoft's
autodiscover; it installs a configuration profile instead, a property list
of type ``Configuration`` holding one ``com.apple.mail.managed`` payload
(Apple's Device Management reference, "Mail"), served as
``application/x-apple-aspen-config``. The servers come from
``client_config.endpoints``, as autoconfig's and autodiscover's do: IMAP over
implicit TLS when that listener is on, else IMAP with STARTTLS, else POP3;
submission as client-config tells it.

Choices (docs/mail.md, "Apple devices"):

- No password inside. A profile is a file people mail and keep in Downloads;
  Apple keeps ``IncomingPassword`` for encrypted profiles. Without it the
  device asks for the password on install, once for both servers
  (``OutgoingPasswordSameAsIncomingPassword``).
- ``*UseSSL`` is true for implicit TLS and STARTTLS alike: it is Apple's "use
  TLS" switch (the port decides how), and our listeners take no password
  before TLS.
- The UUIDs are name-based (UUIDv5) on the mail host name and the address,
  and the identifier is the reversed host name with that UUID: installing
  the profile again replaces the installed one instead of adding a second
  account, and two addresses never collide.
- Signed with the host's certificate when TLS_CERT_FILE/TLS_KEY_FILE name
  one (CMS SignedData, DER, the chain included), so the device shows
  "Verified"; unsigned otherwise (the device shows "Unsigned" and still
  installs it).
"""

from __future__ import annotations

import logging
import plistlib
import re
import uuid
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs7

from mail.discovery.client_config import Endpoints, Server

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/x-apple-aspen-config"
MAIL_PAYLOAD = "com.apple.mail.managed"
ACCOUNT_TYPES = {"imap": "EmailTypeIMAP", "pop3": "EmailTypePOP"}
PASSWORD_AUTH = "EmailAuthPassword"


class NoMailAccess(ValueError):
    """Neither IMAP nor POP3 is on: there is nothing for Mail to read from."""


@dataclass(frozen=True)
class Signer:
    certificate: x509.Certificate
    # The intermediates after the leaf in TLS_CERT_FILE, sent along so the
    # device can build the path to a root it trusts.
    chain: tuple[x509.Certificate, ...]
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


@dataclass(frozen=True)
class AppleProfile:
    filename: str
    # The plist, or the CMS SignedData (DER) holding it.
    body: bytes


def payload_uuids(hostname: str, email: str) -> tuple[str, str]:
    """(the profile's, the Mail payload's) PayloadUUID: the same for the same address here."""
    instance = uuid.uuid5(uuid.NAMESPACE_DNS, hostname.lower())
    address = email.lower()
    return (
        str(uuid.uuid5(instance, f"apple-profile:{address}")).upper(),
        str(uuid.uuid5(instance, f"apple-profile-mail:{address}")).upper(),
    )


def identifier(hostname: str, profile_uuid: str) -> str:
    """``mx.example.net`` -> ``net.example.mx.mail.<uuid>``: reverse-DNS, one per address."""
    reverse = ".".join(reversed(hostname.lower().split(".")))
    return f"{reverse}.mail.{profile_uuid.lower()}"


def filename(email: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._@+-]", "_", email)
    return f"{safe}.mobileconfig"


def _incoming(ep: Endpoints) -> tuple[str, Server]:
    for kind, servers in (("imap", ep.imap), ("pop3", ep.pop3)):
        if servers:
            # Each list is in preference order: implicit TLS first (RFC 8314).
            return kind, servers[0]
    raise NoMailAccess("neither IMAP nor POP3 is on: a mail app has nothing to read from")


def render(
    email: str, display_name: str, ep: Endpoints, *, hostname: str, organization: str = ""
) -> bytes:
    """The profile, an XML property list, for ``email`` on this host (``hostname``: MAIL_HOSTNAME).

    The same inputs give the same bytes (keys sorted, UUIDs name-based).
    """
    kind, incoming = _incoming(ep)
    profile_uuid, mail_uuid = payload_uuids(hostname, email)
    profile_id = identifier(hostname, profile_uuid)
    account: dict[str, Any] = {
        "PayloadType": MAIL_PAYLOAD,
        "PayloadVersion": 1,
        "PayloadIdentifier": f"{profile_id}.account",
        "PayloadUUID": mail_uuid,
        "PayloadDisplayName": f"Mail ({email})",
        "PayloadDescription": f"The mail account {email}",
        "EmailAccountType": ACCOUNT_TYPES[kind],
        "EmailAccountDescription": email,
        "EmailAddress": email,
        "IncomingMailServerHostName": incoming.hostname,
        "IncomingMailServerPortNumber": incoming.port,
        "IncomingMailServerUseSSL": True,
        "IncomingMailServerUsername": email,
        "IncomingMailServerAuthentication": PASSWORD_AUTH,
        "OutgoingMailServerHostName": ep.smtp_hostname,
        "OutgoingMailServerPortNumber": ep.smtp_port,
        "OutgoingMailServerUseSSL": True,
        "OutgoingMailServerUsername": email,
        "OutgoingMailServerAuthentication": PASSWORD_AUTH,
        # No password in the file: the device asks once, on install, for both.
        "OutgoingPasswordSameAsIncomingPassword": True,
    }
    if display_name:
        account["EmailAccountName"] = display_name
    profile: dict[str, Any] = {
        "PayloadType": "Configuration",
        "PayloadVersion": 1,
        "PayloadIdentifier": profile_id,
        "PayloadUUID": profile_uuid,
        "PayloadDisplayName": email,
        "PayloadDescription": (
            f"Sets up {email} in Mail: reading over {kind.upper()} from {incoming.hostname},"
            f" sending through {ep.smtp_hostname}. You are asked for the mailbox's password."
        ),
        "PayloadRemovalDisallowed": False,
        "PayloadContent": [account],
    }
    if organization:
        profile["PayloadOrganization"] = organization
    return plistlib.dumps(profile, fmt=plistlib.FMT_XML, sort_keys=True)


def sign(profile: bytes, signer: Signer) -> bytes:
    """CMS SignedData (RFC 5652) over the profile, DER, the profile and the chain inside."""
    builder = (
        pkcs7.PKCS7SignatureBuilder()
        .set_data(profile)
        .add_signer(signer.certificate, signer.key, hashes.SHA256())
    )
    for certificate in signer.chain:
        builder = builder.add_certificate(certificate)
    # Binary: the plist goes in byte for byte (no CRLF canonicalisation of text).
    return builder.sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.Binary])


# (cert path, key path) -> (the files' bytes, the signer read from them).
_signers: dict[tuple[str, str], tuple[bytes, bytes, Signer | None]] = {}


def load_signer(cert_file: str, key_file: str) -> Signer | None:
    """The signer of TLS_CERT_FILE/TLS_KEY_FILE, None when unset or unusable.

    The files (a few KiB) are read on every call and parsed again only when
    their bytes change, so a renewed certificate signs the next profile
    without a restart, however quickly it was replaced.
    """
    if not (cert_file and key_file):
        return None
    try:
        with open(cert_file, "rb") as f:
            cert_pem = f.read()
        with open(key_file, "rb") as f:
            key_pem = f.read()
    except OSError as exc:
        log.warning("apple profiles go out unsigned: %s", exc)
        return None
    cached = _signers.get((cert_file, key_file))
    if cached is not None and cached[:2] == (cert_pem, key_pem):
        return cached[2]
    signer = _read_signer(cert_pem, key_pem)
    _signers[(cert_file, key_file)] = (cert_pem, key_pem, signer)
    return signer


def _read_signer(cert_pem: bytes, key_pem: bytes) -> Signer | None:
    try:
        certificates = x509.load_pem_x509_certificates(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as exc:
        log.warning("apple profiles go out unsigned: cannot read the certificate: %s", exc)
        return None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        log.warning("apple profiles go out unsigned: CMS signing takes an RSA or EC key")
        return None
    leaf, *chain = certificates
    public = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if leaf.public_key().public_bytes(*public) != key.public_key().public_bytes(*public):
        log.warning("apple profiles go out unsigned: TLS_KEY_FILE is not the certificate's key")
        return None
    return Signer(leaf, tuple(chain), key)
