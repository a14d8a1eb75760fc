"""One IMAP connection's state (RFC 9051 3): who, what is selected, what was enabled."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from mail import directory
from mta.imap.parser import ParseError, SequenceSet
from mta.imap.store import View

NOT_AUTHENTICATED = "not authenticated"
AUTHENTICATED = "authenticated"
SELECTED = "selected"
LOGOUT = "logout"


@dataclass
class Selected:
    name: str
    view: View
    readonly: bool
    # The last SEARCH's result ($, RFC 9051 6.4.4.1) as UIDs.
    saved: list[int] = field(default_factory=list)
    # Flags this session's own STORE set since the last catch-up (email id -> the
    # FLAGS list): not announced again as if another client had changed them,
    # which sync clients (offlineimap) take for news about messages they dropped.
    stored: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.view.uids)

    def seq_of(self, uid: int) -> int | None:
        uids = self.view.uids
        i = bisect.bisect_left(uids, uid)
        return i + 1 if i < len(uids) and uids[i] == uid else None

    def positions(self, seqs: SequenceSet, *, uid: bool) -> list[int]:
        """0-based positions a sequence set names, ascending. Message numbers
        outside the mailbox are an error; UIDs outside it are simply absent."""
        uids = self.view.uids
        if seqs.saved:
            return sorted(i for u in self.saved if (i := self._index(u)) is not None)
        out: set[int] = set()
        if uid:
            largest = uids[-1] if uids else 0
            for lo, hi in seqs.resolve(largest):
                start = bisect.bisect_left(uids, lo)
                end = bisect.bisect_right(uids, hi)
                out.update(range(start, end))
            # "n:*" with n above every UID still names the largest (RFC 9051 6.4.8).
            if uids and any(b is None for _, b in seqs.ranges):
                out.add(len(uids) - 1)
            return sorted(out)
        n = len(uids)
        for lo, hi in seqs.resolve(n):
            if lo < 1 or hi > n:
                raise ParseError("no such message")
            out.update(range(lo - 1, hi))
        return sorted(out)

    def _index(self, uid: int) -> int | None:
        seq = self.seq_of(uid)
        return None if seq is None else seq - 1

    def remove(self, uid: int) -> int | None:
        """Forget an expunged message; its former sequence number."""
        seq = self.seq_of(uid)
        if seq is not None:
            del self.view.uids[seq - 1]
            del self.view.email_ids[seq - 1]
        return seq


@dataclass
class Session:
    ip: str
    tls: bool
    state: str = NOT_AUTHENTICATED
    principal: directory.Principal | None = None
    enabled: set[str] = field(default_factory=set)
    selected: Selected | None = None
    # CONDSTORE is on once a client used it (RFC 7162 3.1): MODSEQ in FETCH replies.
    condstore: bool = False

    @property
    def rev2(self) -> bool:
        return "IMAP4REV2" in self.enabled

    @property
    def utf8(self) -> bool:
        return self.rev2 or "UTF8=ACCEPT" in self.enabled

    @property
    def qresync(self) -> bool:
        return "QRESYNC" in self.enabled

    @property
    def address_id(self) -> str:
        assert self.principal is not None
        return self.principal.address_id
