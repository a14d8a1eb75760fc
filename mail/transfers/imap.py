"""The source side of a transfer: an IMAP client (aioimaplib) and how its folders map here.

Only what an import needs: connect (implicit TLS, STARTTLS or none), LOGIN,
LIST, EXAMINE (read-only: the source is never changed; bodies are fetched
with BODY.PEEK so nothing becomes seen), UID FETCH of the metadata of new
messages, then of one message's bytes at a time (a 5 MB attachment is one
literal in memory, never a whole folder).

The host is resolved once and the connection made to the address checked
(common/outbound.py's rule: private, loopback and link-local targets are
refused unless TRANSFER_ALLOW_PRIVATE), so a name re-pointed between check
and connect cannot reach inside; TLS still checks the certificate against
the name the user typed.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import re
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import aioimaplib
from aioimaplib.aioimaplib import IMAP4ClientProtocol

from common.outbound import is_public_address
from mail.transfers.settings import TransferSettings

TLS_MODES = ("implicit", "starttls", "none")
# Messages whose Message-ID field one FETCH asks for (see Source.messages).
HEADS_PER_FETCH = 100
DEFAULT_PORTS = {"implicit": 993, "starttls": 143, "none": 143}

# IMAP system flags -> JMAP keywords (RFC 8621 4.1.1); \Recent and \Deleted are dropped.
FLAG_KEYWORDS = {
    "\\seen": "$seen",
    "\\flagged": "$flagged",
    "\\answered": "$answered",
    "\\draft": "$draft",
}
# A keyword JMAP accepts: printable ASCII without ( ) { ] % * " \ and no leading backslash.
_KEYWORD = re.compile(r"^[!#$&\'+,\-./0-9:;<=>?@A-Z\[^_`a-z|}~]{1,255}$")

# SPECIAL-USE attributes (RFC 6154) -> our folder roles.
SPECIAL_USE = {
    "\\sent": "sent",
    "\\drafts": "drafts",
    "\\trash": "trash",
    "\\junk": "junk",
    "\\archive": "archive",
}
# Folders that hold copies of mail found elsewhere (Gmail's Starred, Important): not imported.
VIRTUAL = {"\\flagged", "\\important"}
# Without SPECIAL-USE, a top-level folder by these names takes the role.
NAME_ROLES = {
    "sent": "sent",
    "sent items": "sent",
    "sent messages": "sent",
    "sent mail": "sent",
    "drafts": "drafts",
    "draft": "drafts",
    "trash": "trash",
    "deleted items": "trash",
    "deleted messages": "trash",
    "bin": "trash",
    "junk": "junk",
    "spam": "junk",
    "junk e-mail": "junk",
    "junk email": "junk",
    "archive": "archive",
    "archives": "archive",
}
ROLE_NAMES = {
    "inbox": "Inbox",
    "sent": "Sent",
    "drafts": "Drafts",
    "trash": "Trash",
    "junk": "Junk",
    "archive": "Archive",
}


class SourceError(Exception):
    """The source cannot be used: the message is shown to the person as the transfer's error."""


class CommandTimeout(SourceError):
    pass


@dataclass(frozen=True)
class SourceFolder:
    raw: str  # the name as the server spells it (modified UTF-7), for EXAMINE
    name: str  # decoded
    delimiter: str | None
    attributes: frozenset[str]  # lower-cased


@dataclass(frozen=True)
class FolderPlan:
    source: SourceFolder
    role: str | None
    path: str


@dataclass(frozen=True)
class MessageInfo:
    uid: int
    size: int
    keywords: tuple[str, ...]
    internal_date: datetime | None
    # The Message-ID header field as the source sent it (for the duplicate check
    # before the download), empty when the message has none.
    head: bytes = b""


# --- names ---


def decode_utf7(name: str) -> str:
    """IMAP's modified UTF-7 (RFC 3501 5.1.3): "&AOk-t&AOk-" -> "été", "&-" -> "&"."""

    def one(match: re.Match[str]) -> str:
        chunk = match.group(1)
        if not chunk:
            return "&"
        data = chunk.replace(",", "/")
        data += "=" * (-len(data) % 4)
        try:
            return base64.b64decode(data).decode("utf-16-be")
        except (ValueError, UnicodeDecodeError):
            return match.group(0)

    return re.sub(r"&([A-Za-z0-9+,]*)-", one, name)


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_LIST = re.compile(rb'^\((?P<attrs>[^)]*)\) (?P<delim>"(?:\\.|[^"])*"|NIL) (?P<name>.+)$', re.I)


def parse_list(lines: Sequence[bytes | bytearray]) -> list[SourceFolder]:
    found = []
    for line in lines:
        match = _LIST.match(bytes(line))
        if match is None:
            continue
        delim_raw = match["delim"].decode()
        delimiter = None if delim_raw.upper() == "NIL" else _unquote(delim_raw)
        raw = match["name"].decode("utf-8", errors="replace")
        raw = _unquote(raw) if raw.startswith('"') else raw
        attrs = frozenset(a.lower() for a in match["attrs"].decode().split())
        found.append(SourceFolder(raw, decode_utf7(raw), delimiter, attrs))
    return found


def _unquote(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value[1:-1])


def plan_folders(folders: Sequence[SourceFolder]) -> list[FolderPlan]:
    """Source folders in import order with their target: by SPECIAL-USE, then by name.

    INBOX first; a folder marked \\All (Gmail's All Mail) last, into the
    archive: by then every message it shares with another folder is already
    here and is skipped as a duplicate, so what it adds is the archived mail.
    """
    skipped = {"\\noselect", "\\nonexistent"} | VIRTUAL
    usable = [f for f in folders if not f.attributes & skipped]
    roles: dict[str, str] = {}
    for f in usable:  # INBOX, then special-use, each role once; names come after
        role = "inbox" if f.raw.upper() == "INBOX" else None
        if role is None:
            role = next((SPECIAL_USE[a] for a in sorted(f.attributes) if a in SPECIAL_USE), None)
        if role is not None and role not in roles.values():
            roles[f.raw] = role
    taken = set(roles.values())
    plans: list[FolderPlan] = []
    last: list[FolderPlan] = []
    for f in usable:
        path = _path(f)
        role = roles.get(f.raw)
        if role is None and "\\all" in f.attributes and "archive" not in taken:
            role = "archive"
        if role is None and "/" not in path:
            by_name = NAME_ROLES.get(path.lower())
            if by_name is not None and by_name not in taken:
                role = by_name
                taken.add(role)
        plan = FolderPlan(f, role, ROLE_NAMES[role] if role else path)
        (last if "\\all" in f.attributes else plans).append(plan)
    plans.sort(key=lambda p: p.role != "inbox")
    return plans + last


def _path(folder: SourceFolder) -> str:
    """Our "/"-separated path; Courier-style "INBOX.Work" becomes "Work"."""
    parts = folder.name.split(folder.delimiter) if folder.delimiter else [folder.name]
    if len(parts) > 1 and parts[0].upper() == "INBOX":
        parts = parts[1:]
    parts = [p.replace("/", "-").strip() or "_" for p in parts]
    return "/".join(parts)[:1000]


def keywords_of(flags: Sequence[str]) -> tuple[str, ...]:
    out = set()
    for flag in flags:
        lowered = flag.lower()
        if lowered in FLAG_KEYWORDS:
            out.add(FLAG_KEYWORDS[lowered])
        elif not flag.startswith("\\") and _KEYWORD.match(flag):
            out.add(lowered)
    return tuple(sorted(out))


# --- FETCH responses ---

_UID = re.compile(rb"\bUID (\d+)", re.I)
_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)", re.I)
_FLAGS = re.compile(rb"\bFLAGS \(([^)]*)\)", re.I)
_DATE = re.compile(rb'\bINTERNALDATE "([^"]+)"', re.I)
_UIDVALIDITY = re.compile(rb"\[UIDVALIDITY (\d+)\]", re.I)
_EXISTS = re.compile(rb"^(\d+) EXISTS", re.I)


def parse_infos(
    lines: Sequence[bytes | bytearray], after_uid: int, *, need_size: bool = True
) -> list[MessageInfo]:
    """The messages of a metadata FETCH.

    One message's answer is its FETCH line, the header literal (a bytearray)
    and the line after it; servers order the items as they like, so the UID
    may come after the literal.
    """
    records: list[tuple[bytes, bytes]] = []  # (the answer's text, its literal)
    for line in lines:
        if isinstance(line, bytearray):
            if records:
                records[-1] = (records[-1][0], bytes(line))
        elif b" FETCH " in line:
            records.append((bytes(line), b""))
        elif records and not records[-1][0].endswith(b")"):
            records[-1] = (records[-1][0] + b" " + bytes(line), records[-1][1])
    infos = []
    for text, head in records:
        uid, size = _UID.search(text), _SIZE.search(text)
        if uid is None or (size is None and need_size):
            continue
        if int(uid[1]) <= after_uid:  # "n:*" names the last message when n is past it
            continue
        flags = _FLAGS.search(text)
        date = _DATE.search(text)
        infos.append(
            MessageInfo(
                uid=int(uid[1]),
                size=int(size[1]) if size else 0,
                keywords=keywords_of(flags[1].decode().split() if flags else []),
                internal_date=_internal_date(date[1].decode()) if date else None,
                head=head,
            )
        )
    infos.sort(key=lambda i: i.uid)
    return infos


def parse_heads(lines: Sequence[bytes | bytearray]) -> dict[int, bytes]:
    """UID -> its header literal, from a FETCH of header fields."""
    return {i.uid: i.head for i in parse_infos(lines, 0, need_size=False)}


def _internal_date(value: str) -> datetime | None:
    try:
        return datetime.strptime(value.strip(), "%d-%b-%Y %H:%M:%S %z")
    except ValueError:
        return None


# --- the connection ---


class _Client(aioimaplib.IMAP4):
    """aioimaplib's client connecting to a checked address, TLS verified against the host name."""

    def __init__(
        self,
        address: str,
        port: int,
        *,
        server_hostname: str,
        ssl_context: ssl.SSLContext | None,
        timeout: float,
    ) -> None:
        self._server_hostname = server_hostname
        super().__init__(address, port, timeout=timeout, ssl_context=ssl_context)

    def create_client(  # type: ignore[override]
        self,
        host: str,
        port: int,
        loop: asyncio.AbstractEventLoop | None,
        conn_lost_cb: object = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        running = asyncio.get_running_loop()
        self.protocol = IMAP4ClientProtocol(running, None)
        self._client_task = running.create_task(
            running.create_connection(
                lambda: self.protocol,
                host,
                port,
                ssl=ssl_context,
                server_hostname=self._server_hostname if ssl_context else None,
            )
        )

    async def command(self, name: str, *args: str) -> aioimaplib.Response:
        """Any command by name: aioimaplib's simple_command takes only a fixed few."""
        protocol = self.protocol
        return await protocol.execute(
            aioimaplib.Command(name, protocol.new_tag(), *args, loop=protocol.loop)
        )

    async def examine_folder(self, mailbox: str) -> aioimaplib.Response:
        """EXAMINE (SELECT, read-only); aioimaplib runs it but leaves its state at AUTH,
        which then refuses UID FETCH, so the state moves here as its select() does."""
        response = await self.command("EXAMINE", mailbox)
        if response.result == "OK":
            self.protocol.state = aioimaplib.SELECTED
        return response


class Source:
    """A signed-in, read-only session on the source server."""

    def __init__(self, client: _Client, settings: TransferSettings) -> None:
        self.client = client
        self.settings = settings

    async def _cmd(self, coro: object) -> aioimaplib.Response:
        try:
            return await asyncio.wait_for(coro, self.settings.command_timeout)  # type: ignore[arg-type]
        except TimeoutError:
            raise CommandTimeout("the source server stopped answering") from None
        except (aioimaplib.Abort, aioimaplib.Error, OSError) as exc:
            raise SourceError(f"the connection to the source server failed: {exc}") from None

    async def folders(self) -> list[SourceFolder]:
        response = await self._cmd(self.client.list('""', '"*"'))
        if response.result != "OK":
            raise SourceError(f"the source server refused LIST: {_text(response)}")
        return parse_list(response.lines)

    async def examine(self, folder: SourceFolder) -> tuple[int, int]:
        """(UIDVALIDITY, number of messages) of a folder, opened read-only."""
        response = await self._cmd(self.client.examine_folder(quote(folder.raw)))
        if response.result != "OK":
            raise SourceError(f"the source server refused to open {folder.name!r}")
        uidvalidity, exists = 0, 0
        for line in response.lines:
            if isinstance(line, bytearray):
                continue
            if (m := _UIDVALIDITY.search(line)) is not None:
                uidvalidity = int(m[1])
            if (m := _EXISTS.match(line)) is not None:
                exists = int(m[1])
        return uidvalidity, exists

    async def messages(self, after_uid: int) -> list[MessageInfo]:
        """UID, size, flags, internal date and Message-ID field of the open folder's
        messages past ``after_uid``."""
        response = await self._cmd(
            self.client.uid("fetch", f"{after_uid + 1}:*", "(UID FLAGS INTERNALDATE RFC822.SIZE)")
        )
        if response.result != "OK":
            raise SourceError(f"the source server refused FETCH: {_text(response)}")
        infos = parse_infos(response.lines, after_uid)
        # The Message-ID fields come as literals, which aioimaplib parses by
        # recursion, one level per message of a read: asked for in small runs.
        heads: dict[int, bytes] = {}
        for start in range(0, len(infos), HEADS_PER_FETCH):
            run = infos[start : start + HEADS_PER_FETCH]
            response = await self._cmd(
                self.client.uid(
                    "fetch",
                    f"{run[0].uid}:{run[-1].uid}",
                    "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])",
                )
            )
            if response.result == "OK":
                heads.update(parse_heads(response.lines))
        return [replace(i, head=heads.get(i.uid, b"")) for i in infos]

    async def body(self, uid: int) -> bytes | None:
        """The message's bytes (None when the server no longer has it)."""
        response = await self._cmd(self.client.uid("fetch", str(uid), "(BODY.PEEK[])"))
        if response.result != "OK":
            return None
        for line in response.lines:
            if isinstance(line, bytearray):
                return bytes(line)
        return None

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.client.logout(), 2)
        except Exception:  # leaving: whatever the server says
            transport = getattr(self.client.protocol, "transport", None)
            if transport is not None:
                transport.close()


def _text(response: aioimaplib.Response) -> str:
    last = response.lines[-1] if response.lines else b""
    return bytes(last).decode("utf-8", errors="replace")[:200]


def is_loopback_name(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def _resolve(host: str, port: int, settings: TransferSettings, tls: str) -> str:
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM),
            settings.connect_timeout,
        )
    except (OSError, TimeoutError) as exc:
        raise SourceError(f"could not find the host {host}: {exc}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise SourceError(f"could not find the host {host}")
    if not settings.allow_private and not all(is_public_address(a) for a in addresses):
        raise SourceError(f"{host} is a private or local address, which transfers may not reach")
    loopback = all(ipaddress.ip_address(a).is_loopback for a in addresses)
    if tls == "none" and not settings.allow_plaintext and not loopback:
        raise SourceError("TLS mode none is allowed only for a loopback host")
    return addresses[0]


async def connect(
    host: str, port: int, tls: str, username: str, password: str, settings: TransferSettings
) -> Source:
    """A signed-in session, or :class:`SourceError` saying clearly what went wrong."""
    address = await _resolve(host, port, settings, tls)
    context = _tls_context(settings) if tls != "none" else None
    client = _Client(
        address,
        port,
        server_hostname=host,
        ssl_context=context if tls == "implicit" else None,
        timeout=settings.command_timeout,
    )
    source = Source(client, settings)
    try:
        try:
            await asyncio.wait_for(client.wait_hello_from_server(), settings.connect_timeout)
        except ssl.SSLError as exc:
            raise SourceError(f"TLS with {host}:{port} failed: {_tls_reason(exc)}") from None
        except (OSError, TimeoutError) as exc:
            reason = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
            raise SourceError(f"could not connect to {host}:{port}: {reason}") from None
        if tls == "starttls":
            await _starttls(client, host, context, settings)
        try:
            response = await asyncio.wait_for(
                client.login(username, password), settings.connect_timeout
            )
        except TimeoutError:
            raise SourceError(f"{host}:{port} did not answer the sign-in") from None
        except (aioimaplib.Abort, aioimaplib.Error) as exc:
            raise SourceError(f"{host}:{port} refused the sign-in: {exc}") from None
        if response.result != "OK":
            raise SourceError(
                f"the source server refused the username or password ({_text(response)})"
            )
    except BaseException:
        transport = getattr(client.protocol, "transport", None)
        if transport is not None:
            transport.close()
        raise
    return source


def _tls_reason(exc: ssl.SSLError) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {exc.verify_message}"
    return str(exc.reason or exc)


def _tls_context(settings: TransferSettings) -> ssl.SSLContext:
    """Certificates checked against the system's authorities (and TRANSFER_TLS_CA_FILE's)."""
    context = ssl.create_default_context()
    if settings.tls_ca_file:
        try:
            context.load_verify_locations(cafile=settings.tls_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise SourceError(f"TRANSFER_TLS_CA_FILE could not be read: {exc}") from None
    return context


async def _starttls(
    client: _Client, host: str, context: ssl.SSLContext | None, settings: TransferSettings
) -> None:
    # aioimaplib knows the STARTTLS command but not the upgrade: done here on
    # its transport, then the capabilities are asked again (RFC 3501 6.2.1).
    if "STARTTLS" not in client.protocol.capabilities:
        raise SourceError(f"{host} does not offer STARTTLS")
    response = await asyncio.wait_for(client.command("STARTTLS"), settings.connect_timeout)
    if response.result != "OK":
        raise SourceError(f"{host} refused STARTTLS: {_text(response)}")
    loop = asyncio.get_running_loop()
    assert context is not None
    try:
        transport = await asyncio.wait_for(
            loop.start_tls(
                client.protocol.transport, client.protocol, context, server_hostname=host
            ),
            settings.connect_timeout,
        )
    except ssl.SSLError as exc:
        raise SourceError(f"TLS with {host} failed: {_tls_reason(exc)}") from None
    except (OSError, TimeoutError) as exc:
        raise SourceError(f"TLS with {host} failed: {exc or 'timed out'}") from None
    client.protocol.transport = transport
    await asyncio.wait_for(client.protocol.capability(), settings.connect_timeout)
