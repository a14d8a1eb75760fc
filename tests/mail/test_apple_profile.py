"""Apple configuration profiles (.mobileconfig): what Mail on iOS, iPadOS and macOS installs.

The plist is read back with plistlib and held against /api/client-config;
signed profiles are checked with openssl, as a device checks them.
"""

from __future__ import annotations

import datetime
import plistlib
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs7
from cryptography.x509.oid import NameOID

from mail.discovery import apple_profile
from mail.discovery.client_config import endpoints, serialize
from mail.domains.settings import HostingSettings
from tests.mail.factories import PASSWORD, PASSWORD_HASH, signed_in
from tests.mail.webmail_helpers import sign_in
from tests.mta import factories

HOST = "mx.mailhost.test"
HOSTING = HostingSettings(
    mail_hostname=HOST,
    web_hostname="panel.mailhost.test",
    web_port=443,
    web_is_https=True,
    public_url="https://panel.mailhost.test",
)
MEDIA = "application/x-apple-aspen-config"


def render(hosting: HostingSettings = HOSTING, email: str = "ann@example.com", **kw: Any) -> bytes:
    return apple_profile.render(email, "Ann Lee", endpoints(hosting), hostname=HOST, **kw)


def account_of(profile: dict[str, Any]) -> dict[str, Any]:
    [account] = profile["PayloadContent"]
    return account


def assert_matches_client_config(account: dict[str, Any], config: dict[str, Any]) -> None:
    """The profile's servers are client-config's first IMAP (else POP3) and its SMTP."""
    kind = "imap" if config["imap"] else "pop3"
    incoming = config[kind][0]
    assert account["EmailAccountType"] == {"imap": "EmailTypeIMAP", "pop3": "EmailTypePOP"}[kind]
    assert account["IncomingMailServerHostName"] == incoming["hostname"]
    assert account["IncomingMailServerPortNumber"] == incoming["port"]
    smtp = config["smtp"]
    assert account["OutgoingMailServerHostName"] == smtp["hostname"]
    assert account["OutgoingMailServerPortNumber"] == smtp["port"]
    # Apple's "use TLS": true for implicit TLS and STARTTLS alike (no password in clear).
    assert account["IncomingMailServerUseSSL"] is True
    assert account["OutgoingMailServerUseSSL"] is True


@pytest.mark.parametrize(
    "changes",
    [
        {},
        # Submission on implicit TLS (465) instead of STARTTLS (587).
        {"submission_port": 465, "submission_security": "tls"},
        # IMAPS off: IMAP with STARTTLS.
        {"imaps_port": None},
        # No IMAP at all: POP3 over TLS.
        {"imaps_port": None, "imap_port": None},
        # Ports of their own.
        {"imaps_port": 10993, "submission_port": 10587},
    ],
)
def test_the_profile_names_what_client_config_names(changes: dict[str, Any]) -> None:
    hosting = replace(HOSTING, **changes)
    profile = plistlib.loads(render(hosting))
    account = account_of(profile)
    assert_matches_client_config(account, serialize(endpoints(hosting)))
    assert profile["PayloadType"] == "Configuration"
    assert profile["PayloadVersion"] == 1
    assert account["PayloadType"] == "com.apple.mail.managed"
    assert account["PayloadVersion"] == 1
    assert account["EmailAddress"] == "ann@example.com"
    assert account["EmailAccountName"] == "Ann Lee"
    # The full address signs in, with a password, to both servers.
    assert account["IncomingMailServerUsername"] == "ann@example.com"
    assert account["OutgoingMailServerUsername"] == "ann@example.com"
    assert account["IncomingMailServerAuthentication"] == "EmailAuthPassword"
    assert account["OutgoingMailServerAuthentication"] == "EmailAuthPassword"
    assert account["OutgoingPasswordSameAsIncomingPassword"] is True
    # No password of any kind in the file: the device asks on install.
    assert [k for k in account if "Password" in k] == ["OutgoingPasswordSameAsIncomingPassword"]


def test_ports_and_security_per_setting() -> None:
    seen = {}
    for name, changes in {
        "default": {},
        "implicit_submission": {"submission_port": 465, "submission_security": "tls"},
        "imap_starttls": {"imaps_port": None},
        "pop3_only": {"imaps_port": None, "imap_port": None},
    }.items():
        account = account_of(plistlib.loads(render(replace(HOSTING, **changes))))
        seen[name] = (
            account["EmailAccountType"],
            account["IncomingMailServerPortNumber"],
            account["OutgoingMailServerPortNumber"],
        )
    assert seen == {
        "default": ("EmailTypeIMAP", 993, 587),
        "implicit_submission": ("EmailTypeIMAP", 993, 465),
        "imap_starttls": ("EmailTypeIMAP", 143, 587),
        "pop3_only": ("EmailTypePOP", 995, 587),
    }


def test_no_imap_or_pop3_is_refused() -> None:
    hosting = replace(HOSTING, imaps_port=None, imap_port=None, pop3s_port=None, pop3_port=None)
    with pytest.raises(apple_profile.NoMailAccess):
        render(hosting)


def test_uuids_are_stable_per_address_and_distinct_between_addresses() -> None:
    first = plistlib.loads(render())
    again = plistlib.loads(render())
    other = plistlib.loads(render(email="bob@example.com"))
    elsewhere = plistlib.loads(
        apple_profile.render("ann@example.com", "", endpoints(HOSTING), hostname="mx.other.test")
    )
    assert render() == render()
    ids = [
        (p["PayloadUUID"], account_of(p)["PayloadUUID"], p["PayloadIdentifier"])
        for p in (first, again, other, elsewhere)
    ]
    assert ids[0] == ids[1]
    assert len({i for triple in (ids[0], ids[2], ids[3]) for i in triple}) == 9
    # Reverse-DNS from the mail host name; the account's nested under the profile's.
    assert first["PayloadIdentifier"].startswith("test.mailhost.mx.mail.")
    assert account_of(first)["PayloadIdentifier"].startswith(first["PayloadIdentifier"] + ".")
    # Case does not make a second account: addresses are case-insensitive here.
    upper = plistlib.loads(render(email="ANN@example.com"))
    assert upper["PayloadUUID"] == first["PayloadUUID"]


def test_organization_and_display_name_are_optional() -> None:
    named = plistlib.loads(render(organization="Example Mail"))
    assert named["PayloadOrganization"] == "Example Mail"
    bare = plistlib.loads(
        apple_profile.render("ann@example.com", "", endpoints(HOSTING), hostname=HOST)
    )
    assert "PayloadOrganization" not in bare
    assert "EmailAccountName" not in account_of(bare)


# --- signing ----------------------------------------------------------------------


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_certificate(
    tmp_path: Path, *, key: Any = None, hostname: str = HOST
) -> tuple[Path, Path, x509.Certificate, x509.Certificate]:
    """A root CA and a leaf for ``hostname`` signed by it; the cert file is leaf then root."""
    now = datetime.datetime.now(datetime.UTC)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = (
        x509.CertificateBuilder()
        .subject_name(_name("Test Root"))
        .issuer_name(_name("Test Root"))
        .public_key(root_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(root_key, hashes.SHA256())
    )
    leaf_key = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(hostname))
        .issuer_name(root.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .sign(root_key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "fullchain.pem", tmp_path / "privkey.pem"
    pem = serialization.Encoding.PEM
    cert_file.write_bytes(leaf.public_bytes(pem) + root.public_bytes(pem))
    key_file.write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file, leaf, root


def openssl_content(signed: bytes, tmp_path: Path) -> bytes:
    """What ``openssl smime -verify -noverify`` gives back: the signed content, if the signature holds."""
    path = tmp_path / "signed.mobileconfig"
    path.write_bytes(signed)
    done = subprocess.run(
        ["openssl", "smime", "-verify", "-inform", "DER", "-noverify", "-in", str(path)],
        capture_output=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_a_signed_profile_verifies_and_carries_the_same_plist(tmp_path: Path, kind: str) -> None:
    key = ec.generate_private_key(ec.SECP384R1()) if kind == "ec" else None
    cert_file, key_file, leaf, root = make_certificate(tmp_path, key=key)
    signer = apple_profile.load_signer(str(cert_file), str(key_file))
    assert signer is not None
    plist = render()
    signed = apple_profile.sign(plist, signer)
    assert signed[:1] == b"\x30"  # DER
    assert openssl_content(signed, tmp_path) == plist
    # The chain travels with it, so the device can reach a root it trusts.
    inside = pkcs7.load_der_pkcs7_certificates(signed)
    assert {c.fingerprint(hashes.SHA256()) for c in inside} == {
        leaf.fingerprint(hashes.SHA256()),
        root.fingerprint(hashes.SHA256()),
    }
    # Tampered with, it no longer verifies.
    at = signed.index(b"ann@example.com")
    tampered = signed[:at] + b"bob" + signed[at + 3 :]
    path = tmp_path / "tampered.mobileconfig"
    path.write_bytes(tampered)
    done = subprocess.run(
        ["openssl", "smime", "-verify", "-inform", "DER", "-noverify", "-in", str(path)],
        capture_output=True,
        check=False,
        timeout=30,
    )
    assert done.returncode != 0


def test_unusable_certificates_leave_the_profile_unsigned(tmp_path: Path) -> None:
    assert apple_profile.load_signer("", "") is None
    assert apple_profile.load_signer(str(tmp_path / "none.pem"), str(tmp_path / "none.key")) is None
    cert_file, key_file, _, _ = make_certificate(tmp_path)
    # Another key than the certificate's.
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    wrong = tmp_path / "wrong.key"
    wrong.write_bytes(
        other.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    assert apple_profile.load_signer(str(cert_file), str(wrong)) is None
    assert apple_profile.load_signer(str(cert_file), str(key_file)) is not None


def test_a_renewed_certificate_signs_the_next_profile(tmp_path: Path) -> None:
    cert_file, key_file, first, _ = make_certificate(tmp_path)
    signer = apple_profile.load_signer(str(cert_file), str(key_file))
    assert signer is not None and signer.certificate == first
    _, _, renewed, _ = make_certificate(tmp_path)  # the same paths, new files
    signer = apple_profile.load_signer(str(cert_file), str(key_file))
    assert signer is not None and signer.certificate == renewed


# --- over HTTP --------------------------------------------------------------------


async def owned_address(runtime: Any, account_id: str, email: str, name: str = "") -> str:
    local, _, domain = email.partition("@")
    domain_id = await factories.domain(runtime.db, account_id, domain)
    address_id = await factories.address(runtime.db, domain_id, local)
    await runtime.db.execute(
        "UPDATE mail.addresses SET password_hash = %s, display_name = %s WHERE id = %s",
        (PASSWORD_HASH, name, address_id),
    )
    return address_id


async def test_the_owner_downloads_an_address_profile_matching_client_config(client, runtime):
    assert (
        await client.get(f"/api/addresses/{'0' * 8}-0000-4000-8000-{'0' * 12}/apple-profile")
    ).status == 401
    account, headers = await signed_in(runtime)
    address_id = await owned_address(runtime, account.id, "ann@profile.test", "Ann Lee")
    resp = await client.get(f"/api/addresses/{address_id}/apple-profile", headers=headers)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"] == MEDIA
    assert (
        resp.headers["Content-Disposition"]
        == 'attachment; filename="ann@profile.test.mobileconfig"'
    )
    assert "no-store" in resp.headers["Cache-Control"]
    body = await resp.read()
    profile = plistlib.loads(body)
    account_payload = account_of(profile)
    assert account_payload["EmailAddress"] == "ann@profile.test"
    assert account_payload["EmailAccountName"] == "Ann Lee"
    config = await (await client.get("/api/client-config", headers=headers)).json()
    assert_matches_client_config(account_payload, config)
    # The instance's name (TOTP_ISSUER, by default the PUBLIC_URL host).
    assert profile["PayloadOrganization"]
    # The same file again: installing it twice replaces rather than duplicates.
    again = await client.get(f"/api/addresses/{address_id}/apple-profile", headers=headers)
    assert await again.read() == body

    # Another account's address is as missing as a made-up one.
    stranger, _ = await signed_in(runtime)
    theirs = await owned_address(runtime, stranger.id, "zoe@elsewhere.test")
    for other in (theirs, "7d1f0c52-3c41-4f53-9f5e-2b9f3a1c0d11"):
        resp = await client.get(f"/api/addresses/{other}/apple-profile", headers=headers)
        assert resp.status == 404
        assert (await resp.json())["name"] == "not_found"
    assert (
        await client.get("/api/addresses/not-a-uuid/apple-profile", headers=headers)
    ).status == 404


async def test_a_mailbox_downloads_its_own_profile_in_webmail(client, runtime):
    assert (await client.get("/api/mail/apple-profile")).status == 401
    account, panel = await signed_in(runtime)
    await owned_address(runtime, account.id, "ann@webmail-profile.test")
    # The panel's cookie is nothing to webmail's routes.
    assert (await client.get("/api/mail/apple-profile", headers=panel)).status == 401
    await sign_in(client, "ann@webmail-profile.test", PASSWORD)
    resp = await client.get("/api/mail/apple-profile")
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"] == MEDIA
    assert "ann@webmail-profile.test.mobileconfig" in resp.headers["Content-Disposition"]
    profile = plistlib.loads(await resp.read())
    assert account_of(profile)["EmailAddress"] == "ann@webmail-profile.test"
    assert "EmailAccountName" not in account_of(profile)


async def test_with_a_certificate_the_profile_is_signed(make_client, runtime, tmp_path):
    cert_file, key_file, leaf, _ = make_certificate(tmp_path)
    client = await make_client(
        env={"TLS_CERT_FILE": str(cert_file), "TLS_KEY_FILE": str(key_file), "MAIL_HOSTNAME": HOST}
    )
    account, headers = await signed_in(runtime)
    address_id = await owned_address(runtime, account.id, "ann@signed.test")
    resp = await client.get(f"/api/addresses/{address_id}/apple-profile", headers=headers)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"] == MEDIA
    signed = await resp.read()
    content = openssl_content(signed, tmp_path)
    profile = plistlib.loads(content)
    assert account_of(profile)["EmailAddress"] == "ann@signed.test"
    assert account_of(profile)["IncomingMailServerHostName"] == HOST
    assert leaf in pkcs7.load_der_pkcs7_certificates(signed)


async def test_with_no_listener_to_read_from_the_profile_is_409(make_client, runtime):
    off = {name: "off" for name in ("IMAP_PORT", "IMAPS_PORT", "POP3_PORT", "POP3S_PORT")}
    client = await make_client(env=off)
    account, headers = await signed_in(runtime)
    address_id = await owned_address(runtime, account.id, "ann@nolistener.test")
    resp = await client.get(f"/api/addresses/{address_id}/apple-profile", headers=headers)
    assert resp.status == 409
    assert (await resp.json())["name"] == "conflict"
