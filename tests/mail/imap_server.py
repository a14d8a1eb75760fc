"""A real Dovecot IMAP server for the transfer tests, on a free loopback port.

Debian's dovecot-imapd (``make imap-server`` installs it; the tests skip
without it outside CI). It runs in the foreground from a configuration
written under a temporary directory: plaintext passwords in a passwd-file,
Maildir storage, every process as the user running the tests, and the
folders of a mail client's account with their SPECIAL-USE attributes
(RFC 6154) under names that are not the usual ones, so mapping by
attribute is what puts them in the right place. Mail is seeded through
Python's imaplib (APPEND with flags and an internal date), the same way a
mail client fills a mailbox.
"""

from __future__ import annotations

import grp
import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tests.conftest import free_port

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"

# Source folder -> its SPECIAL-USE attribute (None: an ordinary folder).
FOLDERS: dict[str, str | None] = {
    "Gesendet": "\\Sent",
    "Entwürfe": "\\Drafts",
    "Papierkorb": "\\Trash",
    "Unerwünscht": "\\Junk",
    "Old Stuff": "\\Archive",
    "Projects": None,
    "Projects/Alpha": None,
}

CONFIG = """
protocols = imap
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
instance_name = transfers-{port}
log_path = {root}/dovecot.log
{ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = {internal_user}
default_internal_group = {internal_group}
default_login_user = {login_user}
first_valid_uid = 0
first_valid_gid = 0
mail_location = maildir:{root}/mail/%u
# Throw-away mail: seeding hundreds of messages need not wait for the disk.
mail_fsync = never
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users/%u
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {tls_port}
  }}
  process_min_avail = 1
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
namespace inbox {{
  inbox = yes
  separator = /
{mailboxes}
}}
"""


def available() -> bool:
    return os.path.exists(DOVECOT)


@dataclass
class ImapServer:
    root: Path
    port: int
    proc: subprocess.Popen[bytes]
    users: dict[str, str] = field(default_factory=dict)
    # The implicit-TLS port, when started with a certificate (0: none).
    tls_port: int = 0

    host = "127.0.0.1"

    def add_user(self, name: str, password: str) -> None:
        self.users[name] = password
        # One passwd-file per user (its path names %u): a new user is a new file,
        # read at its first login, never a changed file Dovecot may have cached.
        (self.root / "users" / name).write_text(f"{name}:{{PLAIN}}{password}\n")

    def connect(self, user: str) -> imaplib.IMAP4:
        client = imaplib.IMAP4(self.host, self.port)
        client.login(user, self.users[user])
        return client

    def append(
        self,
        user: str,
        folder: str,
        raw: bytes,
        *,
        flags: str = "",
        when: datetime | None = None,
        client: imaplib.IMAP4 | None = None,
    ) -> None:
        own = client is None
        c = client or self.connect(user)
        try:
            name = encode_utf7(folder)
            c.create(_q(name))  # an error when it exists: ignored
            date = imaplib.Time2Internaldate(when) if when is not None else None
            typ, data = c.append(_q(name), f"({flags})" if flags else None, date, raw)
            assert typ == "OK", data
        finally:
            if own:
                c.logout()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def log(self) -> str:
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _q(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def encode_utf7(name: str) -> str:
    """IMAP's modified UTF-7 (RFC 3501 5.1.3), for APPEND/CREATE from imaplib."""
    import base64

    out, buffer = [], []

    def flush() -> None:
        if buffer:
            data = base64.b64encode("".join(buffer).encode("utf-16-be")).decode()
            out.append("&" + data.rstrip("=").replace("/", ",") + "-")
            buffer.clear()

    for ch in name:
        if 0x20 <= ord(ch) <= 0x7E:
            flush()
            out.append("&-" if ch == "&" else ch)
        else:
            buffer.append(ch)
    flush()
    return "".join(out)


def start(root: Path, tls: tuple[Path, Path] | None = None) -> ImapServer:
    """Dovecot on a free port; with ``tls`` (certificate, key), STARTTLS and an imaps port too."""
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("run", "state", "mail", "home", "users"):
        (root / sub).mkdir(exist_ok=True)
    port = free_port()
    tls_port = free_port() if tls else 0
    ssl = "ssl = no"
    if tls:
        ssl = f"ssl = yes\nssl_cert = <{tls[0]}\nssl_key = <{tls[1]}"
    user = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    mailboxes = "".join(
        f'  mailbox "{name}" {{\n    auto = create\n'
        + (f"    special_use = {use}\n" if use else "")
        + "  }\n"
        for name, use in FOLDERS.items()
    )
    # As root (CI), the login processes must run as Debian's unprivileged users,
    # and mail may not be stored as uid 0: it belongs to the dovecot user then.
    root_run = os.getuid() == 0
    mail_uid, mail_gid = os.getuid(), os.getgid()
    if root_run:
        owner = pwd.getpwnam("dovecot")
        mail_uid, mail_gid = owner.pw_uid, owner.pw_gid
        for sub in ("mail", "home"):
            os.chown(root / sub, mail_uid, mail_gid)
    config = CONFIG.format(
        root=root,
        port=port,
        tls_port=tls_port,
        ssl=ssl,
        internal_user="dovecot" if root_run else user,
        internal_group="dovecot" if root_run else group,
        login_user="dovenull" if root_run else user,
        uid=mail_uid,
        gid=mail_gid,
        mailboxes=mailboxes,
    )
    (root / "dovecot.conf").write_text(config)
    proc = subprocess.Popen(
        [DOVECOT, "-F", "-c", str(root / "dovecot.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    server = ImapServer(root, port, proc, tls_port=tls_port)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"dovecot exited with {proc.returncode}:\n{server.log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                if s.recv(100).startswith(b"* OK"):
                    return server
        except OSError:
            time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"dovecot did not start:\n{server.log()}")


def running(tls: tuple[Path, Path] | None = None) -> Iterator[ImapServer]:
    """A server in a directory of its own, outside pytest's private (0700) temporary tree."""
    root = Path(tempfile.mkdtemp(prefix="transfers-imap-"))
    root.chmod(0o755)
    server = start(root, tls)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
