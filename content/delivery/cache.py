"""The in-process cache of delivery answers and delivery keys.

Keyed by the content version (content/changes.py): the version moves after
this process's own commits and on every change notification from another
process, so the first read after a publish anywhere finds the cache emptied
and reads the database. A read captures the version before it starts and
stores its answer only if the version has not moved meanwhile (the spec's
rule for hosts), so a change racing a read never leaves a stale answer.
Bounded in entries and bytes, oldest use evicted first.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from content.keys.store import DeliveryKey

MAX_ENTRIES = 5000
MAX_BYTES = 64 << 20


@dataclass(frozen=True)
class Answer:
    """A delivery body ready to send, with its strong ETag."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, body: bytes) -> Answer:
        return cls(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


class DeliveryCache:
    def __init__(
        self,
        version: Callable[[], int],
        *,
        max_entries: int = MAX_ENTRIES,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self._version = version
        self._seen = version()
        self._answers: OrderedDict[Hashable, Answer] = OrderedDict()
        self._bytes = 0
        self._keys: dict[str, DeliveryKey] = {}
        self._touched: dict[str, float] = {}
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def version(self) -> int:
        """The current content version, emptying the cache when it has moved."""
        now = self._version()
        if now != self._seen:
            self._answers.clear()
            self._keys.clear()
            self._bytes = 0
            self._seen = now
        return now

    def get(self, key: Hashable) -> Answer | None:
        self.version()
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    def put(self, key: Hashable, answer: Answer, version: int) -> None:
        """Keep ``answer`` if it was read at the current ``version``."""
        if self.version() != version or len(answer.body) > self.max_bytes // 8:
            return
        old = self._answers.pop(key, None)
        if old is not None:
            self._bytes -= len(old.body)
        self._answers[key] = answer
        self._bytes += len(answer.body)
        while len(self._answers) > self.max_entries or self._bytes > self.max_bytes:
            _, dropped = self._answers.popitem(last=False)
            self._bytes -= len(dropped.body)

    # Delivery keys: a revocation or a change of scopes notifies (keys/service.py),
    # which moves the version and so empties this too, in every process.
    def key(self, token_hash: str) -> DeliveryKey | None:
        self.version()
        return self._keys.get(token_hash)

    def put_key(self, token_hash: str, key: DeliveryKey, version: int) -> None:
        if self.version() == version:
            if len(self._keys) >= self.max_entries:
                self._keys.clear()
            self._keys[token_hash] = key

    def due_touch(self, key_id: str, seconds: float) -> bool:
        """Whether this process should record the key's use now (at most every ``seconds``)."""
        now = time.monotonic()
        if now - self._touched.get(key_id, -seconds - 1) < seconds:
            return False
        if len(self._touched) >= self.max_entries:
            self._touched.clear()
        self._touched[key_id] = now
        return True
