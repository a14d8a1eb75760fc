"""The DNS record set a hosted domain needs, each record with its expected value.

What is published, and why (mailcow, Mail-in-a-Box and Stalwart show the same):

| purpose | record | value |
|---|---|---|
| mx | MX at the domain | ``10 <MAIL_HOSTNAME>.`` |
| spf | TXT at the domain | ``v=spf1 mx -all``: only the domain's MX hosts send for it |
| dkim | TXT at ``<selector>._domainkey`` for every key | ``v=DKIM1; k=rsa|ed25519; p=...`` |
| dmarc | TXT at ``_dmarc`` | ``v=DMARC1; p=<policy>`` (quarantine unless the operator chose) |
| mta_sts | TXT at ``_mta-sts`` | ``v=STSv1; id=<policy id>`` (RFC 8461) |
| mta_sts_host | CNAME ``mta-sts`` -> this web host | serves the policy over HTTPS |
| tls_rpt | TXT at ``_smtp._tls`` | ``v=TLSRPTv1; rua=mailto:postmaster@<domain>`` (RFC 8460) |
| autoconfig | CNAME ``autoconfig`` -> this web host | Thunderbird autoconfig |
| autodiscover | CNAME ``autodiscover`` -> this web host | Outlook autodiscover |
| submission_srv | SRV ``_submission._tcp`` (RFC 6186), ``_submissions._tcp`` when SUBMISSION_SECURITY is tls (RFC 8314 5.1) | ``0 1 <port> <MAIL_HOSTNAME>.`` |
| submissions_srv | SRV ``_submissions._tcp`` beside a STARTTLS submission port | ``0 1 <port> <MAIL_HOSTNAME>.`` |
| imaps_srv, imap_srv | SRV ``_imaps._tcp`` (RFC 8314), ``_imap._tcp`` (RFC 6186) | ``0 1 993 ...``, ``10 1 143 ...`` |
| pop3s_srv, pop3_srv | SRV ``_pop3s._tcp``, ``_pop3._tcp`` (RFC 6186) | ``20 1 995 ...``, ``30 1 110 ...`` |
| sieve_srv | SRV ``_sieve._tcp`` (RFC 5804 1.8) | ``0 1 4190 <MAIL_HOSTNAME>.`` |
| jmap_srv | SRV ``_jmap._tcp`` (RFC 8620 2.2) | ``0 1 <https port> <web host>.`` |

A listener that is off (``IMAP_PORT=off``...) has no record. The SRV
priorities say what a client should pick (RFC 6186 3.4, lower first):
implicit TLS before STARTTLS (RFC 8314 5.1), IMAP before POP3.

Values are in presentation form: names absolute with a trailing dot, TXT as
the text itself (unquoted, unsplit, as DNS control panels take it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mail.discovery import mta_sts
from mail.dkim.keys import record_value
from mail.domains.settings import HostingSettings

MX_PRIORITY = 10
DMARC_POLICIES = ("none", "quarantine", "reject")
DEFAULT_DMARC_POLICY = "quarantine"


@dataclass(frozen=True)
class Record:
    purpose: str
    type: str
    # Absolute, lower-case, without the trailing dot.
    name: str
    value: str
    ttl: int

    @property
    def key(self) -> str:
        """Identifies the record within the set (DKIM has one per selector)."""
        return f"{self.type} {self.name}"

    @property
    def rdata_text(self) -> str:
        """The value as zone-file RDATA (TXT quoted, in strings of at most 255)."""
        if self.type == "TXT":
            return txt_rdata(self.value)
        return self.value


@dataclass(frozen=True)
class DkimKeyRef:
    selector: str
    algorithm: str
    public_key_b64: str


def txt_rdata(text: str) -> str:
    """TXT character-strings: one per 255 bytes (RFC 1035 3.3), quoted."""
    data = text.encode()
    chunks = [data[i : i + 255] for i in range(0, len(data), 255)] or [b""]
    return " ".join(
        '"' + c.decode().replace("\\", "\\\\").replace('"', '\\"') + '"' for c in chunks
    )


def mx_hosts(hosting: HostingSettings) -> list[str]:
    return [hosting.mail_hostname]


def policy_for(hosting: HostingSettings) -> str:
    return mta_sts.policy_text(
        mode=hosting.mta_sts_mode, mx_hosts=mx_hosts(hosting), max_age=hosting.mta_sts_max_age
    )


def record_set(
    domain: str,
    hosting: HostingSettings,
    keys: Sequence[DkimKeyRef],
    *,
    dmarc_policy: str = DEFAULT_DMARC_POLICY,
) -> list[Record]:
    ttl = hosting.dns_ttl
    mail_host = f"{hosting.mail_hostname}."
    web_host = f"{hosting.web_hostname}."

    def rec(purpose: str, rtype: str, name: str, value: str) -> Record:
        return Record(purpose, rtype, name, value, ttl)

    records = [
        rec("mx", "MX", domain, f"{MX_PRIORITY} {mail_host}"),
        rec("spf", "TXT", domain, "v=spf1 mx -all"),
    ]
    records += [
        rec(
            "dkim",
            "TXT",
            f"{key.selector}._domainkey.{domain}",
            record_value(key.algorithm, key.public_key_b64),
        )
        for key in keys
    ]
    records += [
        rec("dmarc", "TXT", f"_dmarc.{domain}", f"v=DMARC1; p={dmarc_policy}"),
        rec("mta_sts", "TXT", f"_mta-sts.{domain}", mta_sts.txt_record(policy_for(hosting))),
        rec("mta_sts_host", "CNAME", f"mta-sts.{domain}", web_host),
        rec(
            "tls_rpt", "TXT", f"_smtp._tls.{domain}", f"v=TLSRPTv1; rua=mailto:postmaster@{domain}"
        ),
        rec("autoconfig", "CNAME", f"autoconfig.{domain}", web_host),
        rec("autodiscover", "CNAME", f"autodiscover.{domain}", web_host),
    ]
    submission = "_submissions" if hosting.submission_security == "tls" else "_submission"
    services = [
        ("submission_srv", submission, 0, hosting.submission_port),
        ("submissions_srv", "_submissions", 0, hosting.submissions_port),
        ("imaps_srv", "_imaps", 0, hosting.imaps_port),
        ("imap_srv", "_imap", 10, hosting.imap_port),
        ("pop3s_srv", "_pop3s", 20, hosting.pop3s_port),
        ("pop3_srv", "_pop3", 30, hosting.pop3_port),
        ("sieve_srv", "_sieve", 0, hosting.sieve_port),
    ]
    records += [
        rec(purpose, "SRV", f"{service}._tcp.{domain}", f"{priority} 1 {port} {mail_host}")
        for purpose, service, priority, port in services
        if port is not None
    ]
    records.append(
        rec("jmap_srv", "SRV", f"_jmap._tcp.{domain}", f"0 1 {hosting.web_port} {web_host}")
    )
    return records
