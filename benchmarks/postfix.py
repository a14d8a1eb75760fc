"""A private Postfix instance for the benchmarks: the peer a user would pick instead.

Its own config, queue and data directories under a temporary directory and its
own loopback port; no service of the system's is started or touched. Postfix
fsyncs a queue file before it answers 250 (its durable acceptance), as our
daemons commit before theirs.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def start(base: Path, port: int, extra: list[str]) -> Path:
    """Start an instance listening on 127.0.0.1:``port``; its config directory.

    ``extra`` are main.cf lines for the role (a relay, a mailbox host).
    """
    conf = base / "conf"
    for sub in ("conf", "queue", "data"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    (conf / "main.cf").write_text(
        "\n".join(
            [
                "compatibility_level = 3.6",
                f"queue_directory = {base / 'queue'}",
                f"data_directory = {base / 'data'}",
                "mail_owner = postfix",
                "setgid_group = postdrop",
                "inet_interfaces = 127.0.0.1",
                "inet_protocols = ipv4",
                "myhostname = postfix.bench.test",
                "mydestination =",
                "mynetworks = 127.0.0.0/8",
                "smtpd_relay_restrictions = permit_mynetworks, reject",
                f"maillog_file = {base / 'maillog'}",
                f"maillog_file_prefixes = {base}",
                "smtp_tls_security_level = none",
                "smtpd_tls_security_level = none",
                "alias_maps =",
                "alias_database =",
                *extra,
                "",
            ]
        )
    )
    services = []
    for line in Path("/etc/postfix/master.cf").read_text().splitlines():
        fields = line.split()
        if not line or line[0] in "# \t" or len(fields) < 8:
            continue
        if fields[0] == "smtp" and fields[1] == "inet":
            continue
        if fields[4] == "y":  # no chroot: the private instance has no chroot tree
            fields[4] = "n"
        services.append(" ".join(fields))
    (conf / "master.cf").write_text(
        f"127.0.0.1:{port} inet n - n - - smtpd\n" + "\n".join(services) + "\n"
    )
    subprocess.run(["chown", "-R", "postfix", str(base / "data")], check=True)
    subprocess.run(["postfix", "-c", str(conf), "set-permissions"], check=True, capture_output=True)
    subprocess.run(["postfix", "-c", str(conf), "start"], check=True, capture_output=True)
    return conf


def queue_empty(conf: Path) -> bool:
    out = subprocess.run(
        ["postqueue", "-c", str(conf), "-p"], capture_output=True, text=True, check=False
    )
    return "Mail queue is empty" in out.stdout


def wait_empty(conf: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not queue_empty(conf) and time.monotonic() < deadline:
        time.sleep(0.05)


def stop(conf: Path) -> None:
    subprocess.run(["postfix", "-c", str(conf), "stop"], check=False, capture_output=True)
