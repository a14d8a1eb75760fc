"""The directory mta reads mail's accounts through: credentials and signing keys."""

from __future__ import annotations

from common.db import Database, execute
from common.passwords import hash_password
from mail import directory
from mail.dkim import keys
from mail.dkim import store as keys_store
from tests.conftest import TEST_SECRET
from tests.mta import factories


async def test_authenticate_answers_the_address_only_for_its_password(db: Database) -> None:
    owner = await factories.mailbox_owner(db, "carol@directory.test")
    async with db.connection() as conn:
        await execute(
            conn,
            "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
            (await hash_password("correct horse battery"), owner["address_id"]),
        )
        found = await directory.authenticate(conn, " Carol@Directory.TEST", "correct horse battery")
        assert found == directory.Principal(
            address_id=owner["address_id"],
            account_id=owner["account_id"],
            email="carol@directory.test",
        )
        assert await directory.authenticate(conn, "carol@directory.test", "wrong") is None
        # A login names its mailbox: no +tag, no unknown address, no bare domain.
        assert (
            await directory.authenticate(conn, "carol+x@directory.test", "correct horse battery")
            is None
        )
        assert (
            await directory.authenticate(conn, "dave@directory.test", "correct horse battery")
            is None
        )
        assert await directory.authenticate(conn, "directory.test", "correct horse battery") is None


async def test_signing_key_is_the_domains_active_key_unsealed(db: Database) -> None:
    owner = await factories.mailbox_owner(db, "erin@signing.test")
    sealer = directory.key_sealer(TEST_SECRET)
    active, standby = await keys.generate(keys.ED25519), await keys.generate(keys.ED25519)
    async with db.connection() as conn:
        for pair, is_active, selector in ((active, True, "on"), (standby, False, "off")):
            await keys_store.insert(
                conn,
                domain_id=owner["domain_id"],
                selector=selector,
                algorithm=pair.algorithm,
                private_key_sealed=keys.seal_private_key(sealer, pair),
                public_key_b64=pair.public_key_b64,
                active=is_active,
                now=factories.NOW,
            )
        key = await directory.signing_key(conn, sealer, "Signing.Test.")
        assert key == directory.SigningKey(
            domain="signing.test",
            selector="on",
            algorithm=keys.ED25519,
            private_key=active.private_key,
        )
        assert await directory.signing_key(conn, sealer, "elsewhere.test") is None


async def test_the_recipient_lookup_says_whether_a_vacation_response_is_enabled(
    db: Database,
) -> None:
    # Delivery reads the response (and its dates) after the 250 only when this says so.
    owner = await factories.mailbox_owner(db, "erin@directory.test")
    async with db.connection() as conn:
        found = await directory.lookup_recipient(conn, "erin+x", "directory.test")
        assert found.mailbox is not None and not found.mailbox.has_vacation
        await execute(
            conn,
            "INSERT INTO mta.vacation_responses (address_id, is_enabled, updated_at)"
            " VALUES (%s, false, now())",
            (owner["address_id"],),
        )
        found = await directory.lookup_recipient(conn, "erin", "directory.test")
        assert found.mailbox is not None and not found.mailbox.has_vacation
        await execute(
            conn,
            "UPDATE mta.vacation_responses SET is_enabled = true WHERE address_id = %s",
            (owner["address_id"],),
        )
        found = await directory.lookup_recipient(conn, "erin", "directory.test")
        assert found.mailbox is not None and found.mailbox.has_vacation
