"""Response shapes of transfers, built only here: never the password, sealed or not."""

from __future__ import annotations

from typing import Any

from common.openapi import array, integer, obj, string
from mail.transfers.store import STATES, Destination, Transfer

_WHEN = string(fmt="date-time", nullable=True)

# The shape of transfer() below, for the routes' OpenAPI declarations.
TRANSFER = obj(
    {
        "object": {"const": "transfer"},
        "id": string(fmt="uuid"),
        "address_id": string(fmt="uuid"),
        "destination": string(),
        "source": obj(
            {
                "host": string(),
                "port": integer(minimum=1, maximum=65535),
                "tls": string(enum=("implicit", "starttls", "none")),
                "username": string(),
            },
            required=["host", "port", "tls", "username"],
        ),
        "state": string(enum=STATES),
        "error": string(nullable=True),
        "progress": obj(
            {
                "folders_done": integer(minimum=0),
                "folders_total": integer(minimum=0),
                "messages_done": integer(minimum=0),
                "messages_total": integer(minimum=0),
                "duplicates": integer(minimum=0),
                "bytes_done": integer(minimum=0),
                "bytes_total": integer(minimum=0),
                "current_folder": string(nullable=True),
                "errors": integer(minimum=0),
                "recent_errors": array(string()),
            },
            additional=True,
        ),
        "created_at": string(fmt="date-time"),
        "started_at": _WHEN,
        "finished_at": _WHEN,
        "updated_at": string(fmt="date-time"),
    },
    required=["object", "id", "address_id", "state", "progress", "source"],
)

DESTINATIONS = obj(
    {
        "object": {"const": "list"},
        "data": array(
            obj(
                {
                    "object": {"const": "transfer_destination"},
                    "address_id": string(fmt="uuid"),
                    "email": string(),
                    "domain_id": string(fmt="uuid"),
                    "active_transfer_id": string(fmt="uuid", nullable=True),
                },
                required=["object", "address_id", "email", "active_transfer_id"],
            )
        ),
    },
    required=["object", "data"],
)


def transfer(row: Transfer) -> dict[str, Any]:
    return {
        "object": "transfer",
        "id": row.id,
        "address_id": row.address_id,
        "destination": row.destination,
        "source": {"host": row.host, "port": row.port, "tls": row.tls, "username": row.username},
        "state": row.state,
        "error": row.error,
        "progress": {
            "folders_done": row.folders_done,
            "folders_total": row.folders_total,
            "messages_done": row.messages_done,
            "messages_total": row.messages_total,
            "duplicates": row.duplicates,
            "bytes_done": row.bytes_done,
            "bytes_total": row.bytes_total,
            "current_folder": row.current_folder,
            "errors": row.errors,
            "recent_errors": row.recent_errors,
        },
        "created_at": row.created_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "updated_at": row.updated_at,
    }


def destinations(rows: list[Destination]) -> dict[str, Any]:
    # Every address of the account: few enough for one answer (the spec's "Addresses
    # available as destination"); the ones with an active transfer say which.
    return {
        "object": "list",
        "data": [
            {
                "object": "transfer_destination",
                "address_id": r.address_id,
                "email": r.email,
                "domain_id": r.domain_id,
                "active_transfer_id": r.active_transfer_id,
            }
            for r in rows
        ],
    }
