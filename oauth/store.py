"""Every SQL statement of the OAuth server, against the configured table names.

Functions take the connection as their first argument so one transaction can
span several of them. Table names come from :class:`oauth.config.Tables` and
enter the SQL only through ``psycopg2.sql.Identifier``; each statement is
rendered once per store and cached. Times are always passed in from the
injectable clock, never taken from ``now()``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg2 import sql
from psycopg2.extensions import TRANSACTION_STATUS_IDLE

from common.db import Conn, Prepared, execute, fetch_all, fetch_one, fetch_val
from oauth.config import Tables

Row = dict[str, Any]


CLIENT_COLUMNS = (
    "id, client_id, client_secret_hash, name, description, icon_url, redirect_uris,"
    " allowed_scopes, is_official, created_by, created_at, revoked_at, updated_at,"
    " auth_failures"
)
# A client as client authentication reads it: with the failures and the lock of
# the address asking (auth_locked_until), never another address's, so a
# stranger's wrong secrets cannot lock the real client out.
CLIENT_CTE = (
    "c AS (SELECT "
    + ", ".join("cl." + column.strip() for column in CLIENT_COLUMNS.split(","))
    + ", f.failures AS address_failures, f.locked_until AS auth_locked_until"
    " FROM {clients} cl LEFT JOIN {failures} f"
    " ON f.client_id = cl.client_id AND f.address = %(address)s"
    " WHERE cl.client_id = %(client_id)s)"
)
# The gate shared by the token endpoint's one-statement grants: work happens
# only for an active client, not locked for this address, whose stored secret
# hash equals the presented one (both NULL for a public client).
CLIENT_GATE = (
    "EXISTS (SELECT 1 FROM c WHERE c.revoked_at IS NULL"
    " AND (c.auth_locked_until IS NULL OR c.auth_locked_until <= %(now)s)"
    " AND c.client_secret_hash IS NOT DISTINCT FROM %(secret_hash)s)"
)
# An address's failure count after one more failure: the window restarts once it passed.
# The row is locked by ON CONFLICT DO UPDATE, so concurrent failures all count.
_NEXT_FAILURES = "(CASE WHEN f.failures_since > %(since)s THEN f.failures + 1 ELSE 1 END)"
# Columns PATCH may change; anything else never reaches the SET list.
UPDATABLE_CLIENT_FIELDS = (
    "name",
    "description",
    "icon_url",
    "redirect_uris",
    "allowed_scopes",
    "is_official",
)


def _client(row: Row | None) -> Row | None:
    if row is not None:
        row["redirect_uris"] = json.loads(row["redirect_uris"])
        row["allowed_scopes"] = json.loads(row["allowed_scopes"])
    return row


class Store:
    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._names = {
            "clients": sql.Identifier(tables.schema, tables.clients),
            "codes": sql.Identifier(tables.schema, tables.authorization_codes),
            "refresh": sql.Identifier(tables.schema, tables.refresh_tokens),
            "devices": sql.Identifier(tables.schema, tables.device_codes),
            "revoked": sql.Identifier(tables.schema, tables.revoked_access_tokens),
            "failures": sql.Identifier(tables.schema, tables.client_auth_failures),
        }
        self._rendered: dict[str, str] = {}
        self._prepared: dict[str, Prepared] = {}

    def q(self, conn: Conn, template: str) -> str:
        """The statement with table names filled in, rendered once (quoting needs a conn)."""
        text = self._rendered.get(template)
        if text is None:
            text = sql.SQL(template).format(**self._names).as_string(conn.raw)
            self._rendered[template] = text
        return text

    async def fetch_prepared(self, conn: Conn, template: str, params: dict[str, Any]) -> Row | None:
        """Run a hot statement as a server-side prepared statement (common.db.Prepared).

        Planning the token endpoint's statements costs Postgres more than
        running them; prepared, each is planned once per connection. The name
        comes from the rendered text, so stores with other table names never
        share one.
        """
        if conn.raw.info.transaction_status != TRANSACTION_STATUS_IDLE:
            # Inside a host's transaction a statement DEALLOCATEd behind our back
            # would abort it: run it plainly there (the hot paths autocommit).
            return await fetch_one(conn, self.q(conn, template), params)
        statement = self._prepared.get(template)
        if statement is None:
            statement = self._prepared[template] = Prepared(self.q(conn, template))
        return await statement.fetch_one(conn, params)

    # --- clients -----------------------------------------------------------

    async def insert_client(
        self,
        conn: Conn,
        *,
        client_id: str,
        secret_hash: str | None,
        name: str,
        description: str | None,
        icon_url: str | None,
        redirect_uris: Sequence[str],
        allowed_scopes: Sequence[str],
        is_official: bool,
        created_by: int | None,
        now: datetime,
    ) -> Row:
        row = await fetch_one(
            conn,
            self.q(
                conn,
                "INSERT INTO {clients} (client_id, client_secret_hash, name, description,"
                " icon_url, redirect_uris, allowed_scopes, is_official, created_by, created_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING " + CLIENT_COLUMNS,
            ),
            (
                client_id,
                secret_hash,
                name,
                description,
                icon_url,
                json.dumps(list(redirect_uris)),
                json.dumps(list(allowed_scopes)),
                is_official,
                created_by,
                now,
            ),
        )
        assert row is not None
        return _client(row)  # type: ignore[return-value]

    async def get_client(self, conn: Conn, client_id: str) -> Row | None:
        row = await self.fetch_prepared(
            conn,
            "SELECT " + CLIENT_COLUMNS + " FROM {clients} WHERE client_id = %(client_id)s",
            {"client_id": client_id},
        )
        return _client(row)

    async def get_client_for_auth(self, conn: Conn, client_id: str, address: str) -> Row | None:
        """The client with this address's failures and lock (CLIENT_CTE)."""
        row = await self.fetch_prepared(
            conn,
            "WITH " + CLIENT_CTE + " SELECT * FROM c",
            {"client_id": client_id, "address": address},
        )
        return _client(row)

    async def get_client_by_id(self, conn: Conn, id_: int) -> Row | None:
        row = await fetch_one(
            conn,
            self.q(conn, "SELECT " + CLIENT_COLUMNS + " FROM {clients} WHERE id = %s"),
            (id_,),
        )
        return _client(row)

    async def list_clients(self, conn: Conn) -> list[Row]:
        rows = await fetch_all(
            conn, self.q(conn, "SELECT " + CLIENT_COLUMNS + " FROM {clients} ORDER BY id")
        )
        return [_client(r) for r in rows]  # type: ignore[misc]

    async def update_client(
        self, conn: Conn, id_: int, changes: dict[str, Any], now: datetime
    ) -> Row | None:
        assignments = [sql.SQL("updated_at = %s")]
        params: list[Any] = [now]
        for column, value in changes.items():
            if column not in UPDATABLE_CLIENT_FIELDS:
                raise ValueError(f"{column} is not updatable")
            if column in ("redirect_uris", "allowed_scopes"):
                value = json.dumps(list(value))
            assignments.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
            params.append(value)
        statement = sql.SQL(
            "UPDATE {clients} SET {sets} WHERE id = %s AND revoked_at IS NULL RETURNING "
            + CLIENT_COLUMNS
        ).format(clients=self._names["clients"], sets=sql.SQL(", ").join(assignments))
        row = await fetch_one(conn, statement.as_string(conn.raw), (*params, id_))
        return _client(row)

    async def set_client_secret(
        self, conn: Conn, id_: int, secret_hash: str, now: datetime
    ) -> Row | None:
        row = await fetch_one(
            conn,
            self.q(
                conn,
                "WITH cl AS (UPDATE {clients} SET client_secret_hash = %(hash)s,"
                " updated_at = %(now)s, auth_failures = 0, auth_failures_since = NULL"
                " WHERE id = %(id)s AND revoked_at IS NULL RETURNING " + CLIENT_COLUMNS + "),"
                " forgotten AS (DELETE FROM {failures}"
                " WHERE client_id = (SELECT client_id FROM cl))"
                " SELECT * FROM cl",
            ),
            {"hash": secret_hash, "now": now, "id": id_},
        )
        return _client(row)

    async def revoke_client(self, conn: Conn, id_: int, now: datetime) -> Row | None:
        row = await fetch_one(
            conn,
            self.q(
                conn,
                "UPDATE {clients} SET revoked_at = %s, updated_at = %s"
                " WHERE id = %s AND revoked_at IS NULL RETURNING " + CLIENT_COLUMNS,
            ),
            (now, now, id_),
        )
        return _client(row)

    async def record_auth_failure(
        self,
        conn: Conn,
        client_id: str,
        address: str,
        now: datetime,
        *,
        window: timedelta,
        limit: int,
        client_limit: int,
        cap_seconds: int,
    ) -> datetime | None:
        """Count a failed authentication from ``address``; return the lock it earned, if any.

        Failures are counted per (client, address) in a window; from ``limit``
        on, each failure locks that address out of that client for 1, 2, 4 ...
        seconds up to the cap. The client row counts the failures of every
        address in the window; once those reach ``client_limit`` (a spread-out
        guesser), each address is locked from its first failure. No address
        that has not failed is ever locked.
        """
        return await fetch_val(
            conn,
            self.q(
                conn,
                """
                WITH everyone AS (
                    UPDATE {clients} SET
                        auth_failures = CASE WHEN auth_failures_since > %(since)s
                                             THEN auth_failures + 1 ELSE 1 END,
                        auth_failures_since = CASE WHEN auth_failures_since > %(since)s
                                                   THEN auth_failures_since ELSE %(now)s END
                     WHERE client_id = %(client_id)s
                    RETURNING auth_failures),
                lim AS (
                    SELECT CASE WHEN coalesce((SELECT auth_failures FROM everyone), 0)
                                     >= %(client_limit)s
                                THEN 1 ELSE %(limit)s END AS n)
                INSERT INTO {failures} AS f
                       (client_id, address, failures, failures_since, locked_until)
                SELECT %(client_id)s, %(address)s, 1, %(now)s,
                       CASE WHEN lim.n <= 1 THEN %(now)s + make_interval(secs => 1) END
                  FROM lim
                ON CONFLICT (client_id, address) DO UPDATE SET
                    failures = """
                + _NEXT_FAILURES
                + """,
                    failures_since = CASE WHEN f.failures_since > %(since)s
                                          THEN f.failures_since ELSE %(now)s END,
                    locked_until = CASE WHEN """
                + _NEXT_FAILURES
                + """ >= (SELECT n FROM lim)
                        THEN %(now)s + make_interval(secs => least(%(cap)s,
                             power(2, """
                + _NEXT_FAILURES
                + """ - (SELECT n FROM lim))))
                        ELSE f.locked_until END
                RETURNING CASE WHEN f.locked_until > %(now)s THEN f.locked_until END
                """,
            ),
            {
                "client_id": client_id,
                "address": address,
                "now": now,
                "since": now - window,
                "limit": limit,
                "client_limit": client_limit,
                "cap": cap_seconds,
            },
        )

    async def clear_auth_failures(self, conn: Conn, client_id: str, address: str) -> None:
        """The address proved the secret: forget its failures (the client-wide count stays)."""
        await execute(
            conn,
            self.q(conn, "DELETE FROM {failures} WHERE client_id = %s AND address = %s"),
            (client_id, address),
        )

    async def sweep_client_auth_failures(self, conn: Conn, now: datetime, since: datetime) -> int:
        """Forget failures whose window has passed and whose lock has run out."""
        return await execute(
            conn,
            self.q(
                conn,
                "DELETE FROM {failures} WHERE failures_since <= %s"
                " AND (locked_until IS NULL OR locked_until <= %s)",
            ),
            (since, now),
        )

    # --- authorization codes ----------------------------------------------------

    async def insert_code(
        self,
        conn: Conn,
        *,
        code_hash: str,
        client_id: str,
        user_id: int,
        redirect_uri: str,
        code_challenge: str,
        code_challenge_method: str,
        scope: str,
        expires_at: datetime,
        nonce: str | None,
        auth_time: int | None,
    ) -> None:
        await execute(
            conn,
            self.q(
                conn,
                "INSERT INTO {codes} (code, client_id, user_id, redirect_uri, code_challenge,"
                " code_challenge_method, scope, expires_at, nonce, auth_time)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            ),
            (
                code_hash,
                client_id,
                user_id,
                redirect_uri,
                code_challenge,
                code_challenge_method,
                scope,
                expires_at,
                nonce,
                auth_time,
            ),
        )

    async def authenticate_and_exchange_code(
        self,
        conn: Conn,
        *,
        client_id: str,
        address: str,
        secret_hash: str | None,
        code_hash: str,
        challenge: str | None,
        redirect_uri: str | None,
        chain_id: str,
        new_hash: str,
        access_jti: str,
        access_expires_at: datetime,
        now: datetime,
        expires_at: datetime,
    ) -> tuple[Row | None, Row | None, bool]:
        """Read the client, consume the code and start its token chain, in one statement.

        Returns (client, code, issued). The code is consumed (used_at set,
        committed) whenever the client passes the gate, even if a check then
        fails: a code is good for one attempt. The refresh token is inserted
        only if the code belongs to this client, is unexpired, matches a sent
        redirect_uri exactly and its S256 challenge equals the verifier's.
        The row lock makes a concurrent second use wait and then find the
        code used, after the first use's tokens are committed.
        """
        row = await self.fetch_prepared(
            conn,
            (
                "WITH "
                + CLIENT_CTE
                + """,
                used AS (
                    UPDATE {codes} SET used_at = %(now)s, chain_id = %(chain)s
                     WHERE code = %(code)s AND used_at IS NULL AND """
                + CLIENT_GATE
                + """
                 RETURNING *),
                ok AS (
                    SELECT * FROM used
                     WHERE client_id = %(client_id)s AND expires_at > %(now)s
                       AND (%(redirect_uri)s::text IS NULL OR redirect_uri = %(redirect_uri)s)
                       AND code_challenge_method = 'S256'
                       AND code_challenge = %(challenge)s::text),
                new AS (
                    INSERT INTO {refresh} (token_hash, client_id, user_id, scope, chain_id,
                           access_jti, access_expires_at, created_at, expires_at)
                    SELECT %(new_hash)s::text, client_id, user_id, scope, %(chain)s::text,
                           %(jti)s::text, %(access_exp)s::timestamptz, %(now)s::timestamptz,
                           %(exp)s::timestamptz
                      FROM ok
                    RETURNING token_hash)
                SELECT c.*, used.client_id AS code_client_id, used.user_id AS code_user_id,
                       used.scope AS code_scope, used.redirect_uri AS code_redirect_uri,
                       used.code_challenge AS code_challenge,
                       used.code_challenge_method AS code_challenge_method,
                       used.expires_at AS code_expires_at,
                       used.code IS NOT NULL AS code_consumed,
                       EXISTS (SELECT 1 FROM new) AS code_issued
                  FROM c LEFT JOIN used ON true
                """
            ),
            {
                "client_id": client_id,
                "address": address,
                "secret_hash": secret_hash,
                "code": code_hash,
                "challenge": challenge,
                "redirect_uri": redirect_uri,
                "chain": chain_id,
                "new_hash": new_hash,
                "jti": access_jti,
                "access_exp": access_expires_at,
                "now": now,
                "exp": expires_at,
            },
        )
        if row is None:
            return None, None, False
        code = None
        if row.pop("code_consumed"):
            code = {
                "client_id": row["code_client_id"],
                "user_id": row["code_user_id"],
                "scope": row["code_scope"],
                "redirect_uri": row["code_redirect_uri"],
                "code_challenge": row["code_challenge"],
                "code_challenge_method": row["code_challenge_method"],
                "expires_at": row["code_expires_at"],
            }
        issued = bool(row.pop("code_issued"))
        client = {k: v for k, v in row.items() if not k.startswith("code_")}
        return _client(client), code, issued

    async def get_code(self, conn: Conn, code_hash: str) -> Row | None:
        return await fetch_one(
            conn, self.q(conn, "SELECT * FROM {codes} WHERE code = %s"), (code_hash,)
        )

    # --- refresh tokens ---------------------------------------------------------

    async def insert_refresh_token(
        self,
        conn: Conn,
        *,
        token_hash: str,
        client_id: str,
        user_id: int,
        scope: str,
        chain_id: str,
        access_jti: str,
        access_expires_at: datetime,
        now: datetime,
        expires_at: datetime,
    ) -> None:
        await execute(
            conn,
            self.q(
                conn,
                "INSERT INTO {refresh} (token_hash, client_id, user_id, scope, chain_id,"
                " access_jti, access_expires_at, created_at, expires_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            ),
            (
                token_hash,
                client_id,
                user_id,
                scope,
                chain_id,
                access_jti,
                access_expires_at,
                now,
                expires_at,
            ),
        )

    async def authenticate_and_rotate(
        self,
        conn: Conn,
        *,
        client_id: str,
        address: str,
        secret_hash: str | None,
        token_hash: str,
        requested_scopes: list[str] | None,
        new_hash: str,
        access_jti: str,
        access_expires_at: datetime,
        now: datetime,
        expires_at: datetime,
        sealed: str | None,
    ) -> tuple[Row | None, Row | None]:
        """Read the client and rotate its refresh token, in one statement (one round trip).

        Returns (client, successor). The rotation happens only if the client
        is active, not locked and its stored secret hash equals the presented
        one (both NULL for a public client): the same conditions
        client_auth.verify_client then checks in constant time on the
        returned client, which alone decides the answer.

        The client test is written ``(client_id = ...) IS TRUE`` so that it is
        not an index condition: the prepared statement's generic plan is built
        once, often while the table is nearly empty, and with ``client_id =``
        indexable it could settle on the client index and filter every token
        of the client on each rotation (measured: 1.5 ms of PostgreSQL CPU at
        6,500 tokens, growing with the table). The primary key is the only
        way in now.

        The UPDATE takes the row lock; a concurrent rotation of the same token
        waits for it, then finds ``revoked_at`` set and rotates nothing. A
        request for scopes beyond the token's also rotates nothing; the
        caller reads the token to say why.
        """
        row = await self.fetch_prepared(
            conn,
            (
                """
                WITH """
                + CLIENT_CTE
                + """,
                old AS (
                    UPDATE {refresh} SET revoked_at = %(now)s, revoked_reason = 'rotated',
                           successor_sealed = %(sealed)s
                     WHERE token_hash = %(hash)s AND (client_id = %(client_id)s) IS TRUE
                       AND revoked_at IS NULL AND expires_at > %(now)s
                       AND (%(scopes)s::text[] IS NULL
                            OR %(scopes)s::text[] <@ string_to_array(scope, ' '))
                       AND """
                + CLIENT_GATE
                + """
                 RETURNING token_hash, client_id, user_id, scope, chain_id),
                new AS (
                    INSERT INTO {refresh} (token_hash, client_id, user_id, scope,
                           parent_token_hash, chain_id, access_jti, access_expires_at,
                           created_at, expires_at)
                    SELECT %(new_hash)s::text, client_id, user_id,
                           coalesce(array_to_string(%(scopes)s::text[], ' '), scope),
                           token_hash, chain_id, %(jti)s::text, %(access_exp)s::timestamptz,
                           %(now)s::timestamptz, %(exp)s::timestamptz
                      FROM old
                    RETURNING token_hash, user_id, scope, chain_id)
                SELECT c.*, new.token_hash AS new_token_hash, new.user_id AS new_user_id,
                       new.scope AS new_scope, new.chain_id AS new_chain_id
                  FROM c LEFT JOIN new ON true
                """
            ),
            {
                "client_id": client_id,
                "address": address,
                "secret_hash": secret_hash,
                "hash": token_hash,
                "scopes": requested_scopes,
                "new_hash": new_hash,
                "jti": access_jti,
                "access_exp": access_expires_at,
                "now": now,
                "exp": expires_at,
                "sealed": sealed,
            },
        )
        if row is None:
            return None, None
        successor = None
        if row["new_token_hash"] is not None:
            successor = {
                "token_hash": row["new_token_hash"],
                "client_id": client_id,
                "user_id": row["new_user_id"],
                "scope": row["new_scope"],
                "chain_id": row["new_chain_id"],
            }
        client = {k: v for k, v in row.items() if not k.startswith("new_")}
        return _client(client), successor

    async def get_refresh_token(self, conn: Conn, token_hash: str) -> Row | None:
        return await fetch_one(
            conn,
            self.q(conn, "SELECT * FROM {refresh} WHERE token_hash = %s"),
            (token_hash,),
        )

    async def get_successor(self, conn: Conn, token_hash: str) -> Row | None:
        return await fetch_one(
            conn,
            self.q(conn, "SELECT * FROM {refresh} WHERE parent_token_hash = %s"),
            (token_hash,),
        )

    async def burn_chain(self, conn: Conn, chain_id: str, now: datetime, reason: str) -> int:
        """Revoke every live token of a chain and denylist the chain's live access tokens."""
        return await self._burn(conn, "chain_id", chain_id, now, reason)

    async def revoke_client_tokens(
        self, conn: Conn, client_id: str, now: datetime, reason: str
    ) -> int:
        """Revoke every live refresh token of a client, and its live access tokens."""
        return await self._burn(conn, "client_id", client_id, now, reason)

    async def _burn(self, conn: Conn, column: str, value: str, now: datetime, reason: str) -> int:
        assert column in ("chain_id", "client_id")
        return int(
            await fetch_val(
                conn,
                self.q(
                    conn,
                    """
                    WITH burned AS (
                        UPDATE {refresh} SET revoked_at = %(now)s, revoked_reason = %(reason)s,
                               successor_sealed = NULL
                         WHERE """
                    + column
                    + """ = %(value)s AND revoked_at IS NULL
                        RETURNING token_hash),
                    denied AS (
                        INSERT INTO {revoked} (jti, client_id, revoked_at, expires_at)
                        SELECT access_jti, client_id, %(now)s, access_expires_at FROM {refresh}
                         WHERE """
                    + column
                    + """ = %(value)s AND access_jti IS NOT NULL
                           AND access_expires_at > %(now)s
                        ON CONFLICT (jti) DO NOTHING)
                    SELECT count(*) FROM burned
                    """,
                ),
                {"now": now, "reason": reason, "value": value},
            )
        )

    # --- revoked access tokens --------------------------------------------------

    async def revoke_access_token(
        self, conn: Conn, jti: str, client_id: str, now: datetime, expires_at: datetime
    ) -> None:
        await execute(
            conn,
            self.q(
                conn,
                "INSERT INTO {revoked} (jti, client_id, revoked_at, expires_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (jti) DO NOTHING",
            ),
            (jti, client_id, now, expires_at),
        )

    async def is_access_token_revoked(self, conn: Conn, jti: str) -> bool:
        found = await fetch_val(
            conn, self.q(conn, "SELECT 1 FROM {revoked} WHERE jti = %s"), (jti,)
        )
        return found is not None

    # --- device codes -----------------------------------------------------------

    async def insert_device_code(
        self,
        conn: Conn,
        *,
        device_hash: str,
        user_code: str,
        client_id: str,
        scope: str,
        interval: int,
        now: datetime,
        expires_at: datetime,
    ) -> None:
        await execute(
            conn,
            self.q(
                conn,
                "INSERT INTO {devices} (device_code, user_code, client_id, scope,"
                " poll_interval, created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            ),
            (device_hash, user_code, client_id, scope, interval, now, expires_at),
        )

    async def get_device_by_user_code(self, conn: Conn, user_code: str) -> Row | None:
        return await fetch_one(
            conn, self.q(conn, "SELECT * FROM {devices} WHERE user_code = %s"), (user_code,)
        )

    async def decide_device(
        self, conn: Conn, user_code: str, user_id: int, now: datetime, *, approve: bool
    ) -> Row | None:
        """Approve or deny a pending, unexpired device code; None if it is not pending."""
        column = "approved_at" if approve else "denied_at"
        return await fetch_one(
            conn,
            self.q(
                conn,
                "UPDATE {devices} SET " + column + " = %s, user_id = %s"
                " WHERE user_code = %s AND approved_at IS NULL AND denied_at IS NULL"
                " AND expires_at > %s RETURNING *",
            ),
            (now, user_id, user_code, now),
        )

    async def poll_device(
        self, conn: Conn, device_hash: str, client_id: str, now: datetime, step: int
    ) -> Row | None:
        """Record a poll of a pending code; grow its interval when it came too early.

        Returns the row with ``too_fast`` telling whether this poll was early.
        """
        return await fetch_one(
            conn,
            self.q(
                conn,
                """
                UPDATE {devices} AS d SET
                       last_polled_at = %(now)s,
                       poll_interval = d.poll_interval + CASE WHEN early.too_fast
                                                         THEN %(step)s ELSE 0 END
                  FROM (SELECT device_code,
                               coalesce(last_polled_at + make_interval(secs => poll_interval)
                                        > %(now)s, false) AS too_fast
                          FROM {devices}
                         WHERE device_code = %(hash)s AND client_id = %(client)s
                         FOR UPDATE) AS early
                 WHERE d.device_code = early.device_code
                RETURNING d.*, early.too_fast
                """,
            ),
            {"now": now, "step": step, "hash": device_hash, "client": client_id},
        )

    async def take_approved_device(
        self, conn: Conn, device_hash: str, client_id: str, now: datetime
    ) -> Row | None:
        """Delete an approved, unexpired code and return it: exchanged once, then gone."""
        return await fetch_one(
            conn,
            self.q(
                conn,
                "DELETE FROM {devices} WHERE device_code = %s AND client_id = %s"
                " AND approved_at IS NOT NULL AND expires_at > %s RETURNING *",
            ),
            (device_hash, client_id, now),
        )

    # --- sweeps -----------------------------------------------------------------

    async def sweep_authorization_codes(self, conn: Conn, now: datetime) -> int:
        return await execute(
            conn, self.q(conn, "DELETE FROM {codes} WHERE expires_at < %s"), (now,)
        )

    async def sweep_refresh_tokens(self, conn: Conn, now: datetime, sealed_before: datetime) -> int:
        """Drop expired refresh tokens and denylist entries; forget sealed pairs past the window."""
        await execute(
            conn,
            self.q(
                conn,
                "UPDATE {refresh} SET successor_sealed = NULL"
                " WHERE successor_sealed IS NOT NULL AND revoked_at < %s",
            ),
            (sealed_before,),
        )
        await execute(conn, self.q(conn, "DELETE FROM {revoked} WHERE expires_at < %s"), (now,))
        return await execute(
            conn, self.q(conn, "DELETE FROM {refresh} WHERE expires_at < %s"), (now,)
        )

    async def sweep_device_codes(self, conn: Conn, now: datetime) -> int:
        return await execute(
            conn, self.q(conn, "DELETE FROM {devices} WHERE expires_at < %s"), (now,)
        )
