"""What the Email methods run with: the raw message store, the clock, the limits,
and where uploaded blobs are read (the JMAP upload endpoint's store)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from common.clock import Clock
from mta.jmap.email.errors import MethodError
from mta.store.emails import is_id
from mta.store.raw import RawMessages

__all__ = ["EmailContext", "UploadReader", "is_id", "valid_ids"]

# (address id, blob id) -> the bytes of a blob that address uploaded, or None.
UploadReader = Callable[[str, str], Awaitable[bytes | None]]


async def _no_uploads(_address_id: str, _blob_id: str) -> bytes | None:
    return None


@dataclass
class EmailContext:
    raw: RawMessages
    clock: Clock
    uploads: UploadReader = _no_uploads
    max_objects_in_get: int = 500
    max_objects_in_set: int = 500
    max_size_upload: int = 50_000_000
    max_mailboxes_per_email: int = 32
    # Set by the JMAP server to its Email/query page ceiling; webmail keeps it.
    max_query_limit: int = 1000


def valid_ids(ids: object) -> list[str]:
    """The ids that can name a row (our ids are lower-case uuids); others are notFound."""
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise MethodError("invalidArguments", "ids must be a list of strings")
    return [i for i in ids if is_id(i)]
