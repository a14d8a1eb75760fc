"""Running compiled Sieve scripts against one message, for one recipient.

Pure: no database, no I/O. The result is a list of actions the delivery code
applies. Several filters of an address run in order as one script would
(RFC 5228 sections 2.10.2 and 4): actions add up, ``stop`` ends every filter,
and the implicit keep happens unless some filter cancelled it with fileinto,
redirect or discard. Flags (RFC 5232) carry from one filter to the next.

A failure at run time (RFC 5228 2.10.6) raises :class:`SieveRuntimeError`;
delivery then keeps the message in the inbox and records the failure.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass, field
from email.message import Message

from sievelib.commands import Command
from sievelib.tools import unquote

from common.recipients import AddressRefused, check_recipient
from mta.message import header_values, text_body
from mta.sieve.compiler import Script

# IMAP system flags as JMAP keywords (RFC 8621 4.1.1).
IMAP_TO_KEYWORD = {
    "\\seen": "$seen",
    "\\flagged": "$flagged",
    "\\answered": "$answered",
    "\\draft": "$draft",
}
MAX_ACTIONS = 32
_KEYWORD = re.compile(r"^[\x21-\x7e]{1,255}$")


class SieveRuntimeError(Exception):
    """A script failed while running; the message is kept in the inbox."""


@dataclass(frozen=True)
class Envelope:
    mail_from: str
    rcpt_to: str


@dataclass
class Action:
    kind: str  # keep | fileinto | redirect | discard
    filter_id: str | None = None
    mailbox: str | None = None
    create: bool = False
    keywords: tuple[str, ...] = ()
    address: str | None = None


@dataclass
class Outcome:
    actions: list[Action] = field(default_factory=list)
    implicit_keep: bool = True
    stopped: bool = False
    flags: set[str] = field(default_factory=set)
    # The filters whose commands took an action: shown in activity.
    matched: list[str] = field(default_factory=list)

    @property
    def final(self) -> list[Action]:
        """The actions to apply, implicit keep included."""
        actions = list(self.actions)
        if self.implicit_keep:
            actions.append(Action(kind="keep", keywords=tuple(sorted(self.flags))))
        return actions


@dataclass(frozen=True)
class Incoming:
    """What the tests read: the parsed message, its raw size and the envelope."""

    message: Message
    size: int
    envelope: Envelope


def run(scripts: list[tuple[str, Script]], msg: Incoming) -> Outcome:
    """Run each (filter_id, script) in order until a ``stop``."""
    outcome = Outcome()
    for filter_id, script in scripts:
        _Run(msg, outcome, filter_id).block(script.commands)
        if outcome.stopped:
            break
    return outcome


class _Stop(Exception):
    pass


class _Run:
    def __init__(self, msg: Incoming, outcome: Outcome, filter_id: str) -> None:
        self.msg = msg
        self.outcome = outcome
        self.filter_id = filter_id

    def block(self, commands: list[Command]) -> None:
        try:
            self._block(commands)
        except _Stop:
            self.outcome.stopped = True

    def _block(self, commands: list[Command]) -> None:
        branch_taken = False
        for command in commands:
            name = command.name
            if name == "require":
                continue
            if name == "if":
                branch_taken = self.test(command.arguments["test"])
                if branch_taken:
                    self._block(command.children)
                continue
            if name == "elsif":
                if not branch_taken and self.test(command.arguments["test"]):
                    branch_taken = True
                    self._block(command.children)
                continue
            if name == "else":
                if not branch_taken:
                    self._block(command.children)
                branch_taken = True
                continue
            self.action(command)

    # --- actions ---------------------------------------------------------

    def action(self, c: Command) -> None:
        out = self.outcome
        name = c.name
        if name == "stop":
            raise _Stop
        if name in ("setflag", "addflag", "removeflag"):
            flags = {_keyword(f) for f in _flag_words(_strings(c.arguments["list-of-flags"]))}
            if name == "setflag":
                out.flags = flags
            elif name == "addflag":
                out.flags |= flags
            else:
                out.flags -= flags
            return
        if len(out.actions) >= MAX_ACTIONS:
            raise SieveRuntimeError(f"more than {MAX_ACTIONS} actions")
        self._matched()
        if name == "keep":
            out.actions.append(Action("keep", self.filter_id, keywords=self._flags(c)))
            out.implicit_keep = False
        elif name == "discard":
            out.implicit_keep = False
        elif name == "fileinto":
            mailbox = unquote(c.arguments["mailbox"])
            out.actions.append(
                Action(
                    "fileinto",
                    self.filter_id,
                    mailbox=mailbox,
                    create="create" in c.arguments,
                    keywords=self._flags(c),
                )
            )
            if "copy" not in c.arguments:
                out.implicit_keep = False
        elif name == "redirect":
            address = unquote(c.arguments["address"]).strip()
            _name, parsed = email.utils.parseaddr(address)
            if not parsed or "@" not in parsed or parsed != address.strip("<>"):
                raise SieveRuntimeError(f"redirect to an invalid address {address!r}")
            try:
                # The check of every sending path (docs/mail.md, "Recipient addresses").
                check_recipient(parsed)
            except AddressRefused as exc:
                raise SieveRuntimeError(
                    f"redirect to an invalid address {address!r}: {exc}"
                ) from None
            out.actions.append(Action("redirect", self.filter_id, address=parsed))
            if "copy" not in c.arguments:
                out.implicit_keep = False
        else:  # compile_script refuses anything else
            raise SieveRuntimeError(f"{name} cannot run here")

    def _matched(self) -> None:
        if self.filter_id not in self.outcome.matched:
            self.outcome.matched.append(self.filter_id)

    def _flags(self, c: Command) -> tuple[str, ...]:
        if "flags" in c.arguments:
            raw = c.extra_arguments.get("flags", [])
            return tuple(sorted({_keyword(f) for f in _flag_words(_strings(raw))}))
        return tuple(sorted(self.outcome.flags))

    # --- tests -----------------------------------------------------------

    def test(self, t: Command) -> bool:
        name = t.name
        args = t.arguments
        if name == "true":
            return True
        if name == "false":
            return False
        if name == "not":
            return not self.test(args["test"])
        if name == "allof":
            return all(self.test(child) for child in t.children)
        if name == "anyof":
            return any(self.test(child) for child in t.children)
        if name == "exists":
            return all(self.msg.message.get(h) is not None for h in _strings(args["header-names"]))
        if name == "size":
            limit = _number(str(args["limit"]))
            return self.msg.size > limit if args["comparator"] == ":over" else self.msg.size < limit
        if name == "header":
            values = [v for h in _strings(args["header-names"]) for v in self._header(h)]
            return _match(t, values, _strings(args["key-list"]))
        if name == "address":
            values = [
                _address_part(t, a)
                for h in _strings(args["header-list"])
                for a in self._addresses(self._header(h))
            ]
            return _match(t, values, _strings(args["key-list"]))
        if name == "envelope":
            values = []
            for part in _strings(args["header-list"]):
                part = part.lower()
                if part == "from":
                    values.append(self.msg.envelope.mail_from)
                elif part == "to":
                    values.append(self.msg.envelope.rcpt_to)
            return _match(t, [_address_part(t, v) for v in values], _strings(args["key-list"]))
        if name == "body":
            return _match(t, [self._body_text()], _strings(args["key-list"]), substring_ok=True)
        if name == "hasflag":
            wanted = {_keyword(f) for f in _flag_words(_strings(args["list-of-flags"]))}
            return bool(wanted & self.outcome.flags)
        raise SieveRuntimeError(f"test {name} cannot run here")

    def _header(self, name: str) -> list[str]:
        return header_values(self.msg.message, name)

    @staticmethod
    def _addresses(values: list[str]) -> list[str]:
        return [addr for _n, addr in email.utils.getaddresses(values) if addr]

    def _body_text(self) -> str:
        try:
            return text_body(self.msg.message)[0]
        except Exception as exc:
            raise SieveRuntimeError(f"cannot decode the body: {exc}") from exc


def _strings(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [unquote(str(v)) for v in items]


def _flag_words(flags: list[str]) -> list[str]:
    # "a b" in a flag list is two flags (RFC 5232 section 3).
    return [word for f in flags for word in f.split()]


def _keyword(flag: str) -> str:
    keyword = IMAP_TO_KEYWORD.get(flag.lower(), flag.lower())
    if not _KEYWORD.match(keyword) or keyword.startswith("\\"):
        raise SieveRuntimeError(f"invalid flag {flag!r}")
    return keyword


def _number(raw: str) -> int:
    match = re.fullmatch(r"(\d+)([KMG]?)", raw.strip(), re.IGNORECASE)
    if not match:
        raise SieveRuntimeError(f"invalid number {raw!r}")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[match.group(2).lower()]
    return int(match.group(1)) * scale


def _address_part(t: Command, address: str) -> str:
    part = t.arguments.get("address-part", ":all")
    local, _, domain = address.rpartition("@")
    if part == ":localpart":
        return local if "@" in address else address
    if part == ":domain":
        return domain if "@" in address else ""
    return address


def _match(t: Command, values: list[str], keys: list[str], *, substring_ok: bool = False) -> bool:
    match_type = t.arguments.get("match-type", ":contains" if substring_ok else ":is")
    comparator = unquote(str(t.extra_arguments.get("comparator", '"i;ascii-casemap"')))
    if comparator not in ("i;ascii-casemap", "i;octet"):
        raise SieveRuntimeError(f"comparator {comparator} is not supported")
    fold = comparator == "i;ascii-casemap"

    def norm(s: str) -> str:
        return s.lower() if fold else s

    for value in values:
        v = norm(value)
        for key in keys:
            k = norm(key)
            if match_type == ":is" and v == k:
                return True
            if match_type == ":contains" and k in v:
                return True
            if match_type == ":matches" and _glob(k).fullmatch(v):
                return True
            if match_type not in (":is", ":contains", ":matches"):
                raise SieveRuntimeError(f"match type {match_type} is not supported")
    return False


def _glob(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)
