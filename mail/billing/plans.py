"""The operator's plans: read from PLANS_FILE (TOML or JSON), synchronised at start.

Without a file, one built-in plan, ``free``, is the default: every feature on
and no limit, so a self-hoster who never configures billing is never blocked.
A plan removed from the file is hidden, not deleted (accounts may still be on
it). docs/mail.md, "The plans file", lists every feature and limit name.
"""

from __future__ import annotations

import json
import re
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

from common.db import Conn, Json, execute
from common.settings import SettingsError
from mail.directory.plans import BUILTIN_FREE, FEATURES, LIMITS, PlanSpec

__all__ = ["BUILTIN_FREE", "FEATURES", "INTERVALS", "LIMITS", "PlanSpec", "load", "parse"]

INTERVALS = ("month", "year")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def load(path: str) -> list[PlanSpec]:
    """The plans of ``path`` (``.toml`` or ``.json``), checked; the built-in plan without one."""
    if not path:
        return [BUILTIN_FREE]
    raw = Path(path).read_bytes()
    try:
        doc = json.loads(raw) if path.endswith(".json") else tomllib.loads(raw.decode())
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"PLANS_FILE {path}: {exc}") from None
    return parse(doc)


def parse(doc: Any) -> list[PlanSpec]:
    items = doc.get("plans") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise SettingsError("PLANS_FILE needs a non-empty list of plans")
    plans = [_plan(item) for item in items]
    ids = [p.id for p in plans]
    if len(set(ids)) != len(ids):
        raise SettingsError("PLANS_FILE: plan ids must be unique")
    defaults = [p for p in plans if p.is_default]
    if len(defaults) > 1:
        raise SettingsError("PLANS_FILE: at most one plan may be the default")
    if not defaults:
        # The first by position (then id) is the one accounts start on.
        first = min(plans, key=lambda p: (p.position, p.id))
        plans = [_with_default(p, p is first) for p in plans]
    if next(p for p in plans if p.is_default).price:
        raise SettingsError("PLANS_FILE: the default plan must be free (price 0)")
    return plans


def _with_default(plan: PlanSpec, flag: bool) -> PlanSpec:
    return PlanSpec(**{**plan.__dict__, "is_default": flag})


def _plan(item: Any) -> PlanSpec:
    if not isinstance(item, dict):
        raise SettingsError("PLANS_FILE: each plan is a table/object")
    pid = item.get("id")
    if not isinstance(pid, str) or not _ID.match(pid):
        raise SettingsError(f"PLANS_FILE: bad plan id {pid!r}")
    features = item.get("features", {})
    limits = item.get("limits", {})
    unknown = (set(features) - set(FEATURES)) | (set(limits) - set(LIMITS))
    if unknown:
        raise SettingsError(f"PLANS_FILE: plan {pid}: unknown names {sorted(unknown)}")
    for name, value in features.items():
        if not isinstance(value, bool):
            raise SettingsError(f"PLANS_FILE: plan {pid}: feature {name} must be true or false")
    for name, value in limits.items():
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise SettingsError(f"PLANS_FILE: plan {pid}: limit {name} must be a count >= 0")
    interval = item.get("interval", "month")
    if interval not in INTERVALS:
        raise SettingsError(f"PLANS_FILE: plan {pid}: interval is month or year")
    price = item.get("price", 0)
    if isinstance(price, bool) or not isinstance(price, int) or price < 0:
        raise SettingsError(f"PLANS_FILE: plan {pid}: price is in minor units (cents), >= 0")
    return PlanSpec(
        id=pid,
        name=str(item.get("name", pid)),
        description=str(item.get("description", "")),
        position=int(item.get("position", 0)),
        visible=bool(item.get("visible", True)),
        is_default=bool(item.get("default", False)),
        price=price,
        currency=str(item.get("currency", "usd")).lower(),
        interval=interval,
        # Unnamed features are off, unnamed limits unlimited: stored whole, so
        # what an account sees never depends on defaults in code.
        features={f: bool(features.get(f, False)) for f in FEATURES},
        limits={name: limits.get(name) for name in LIMITS},
        stripe_price_id=item.get("stripe_price_id") or None,
    )


async def sync(conn: Conn, plans: list[PlanSpec], now: datetime) -> None:
    """Make mail.plans what the file says, in the caller's transaction."""
    ids = [p.id for p in plans]
    await execute(conn, "UPDATE mail.plans SET is_default = false WHERE is_default")
    await execute(
        conn,
        "UPDATE mail.plans SET visible = false, updated_at = %s WHERE NOT (id = ANY(%s))",
        (now, ids),
    )
    for p in plans:
        await execute(
            conn,
            """
            INSERT INTO mail.plans (id, name, description, position, visible, is_default, price,
                                    currency, "interval", features, limits, stripe_price_id,
                                    updated_at)
            VALUES (%(id)s, %(name)s, %(description)s, %(position)s, %(visible)s, %(is_default)s,
                    %(price)s, %(currency)s, %(interval)s, %(features)s, %(limits)s,
                    %(stripe_price_id)s, %(now)s)
            ON CONFLICT (id) DO UPDATE SET
                name = EXCLUDED.name, description = EXCLUDED.description,
                position = EXCLUDED.position, visible = EXCLUDED.visible,
                is_default = EXCLUDED.is_default, price = EXCLUDED.price,
                currency = EXCLUDED.currency, "interval" = EXCLUDED."interval",
                features = EXCLUDED.features, limits = EXCLUDED.limits,
                stripe_price_id = EXCLUDED.stripe_price_id, updated_at = EXCLUDED.updated_at
            """,
            {
                **p.__dict__,
                "features": Json(p.features),
                "limits": Json(p.limits),
                "now": now,
            },
        )
