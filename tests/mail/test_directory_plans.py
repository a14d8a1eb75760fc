"""The RCPT TO statement (mail/directory/) reaches rows by their keys under a generic plan."""

from __future__ import annotations

from common.db import Database, execute
from mail.directory import lookup_recipient
from tests.mta import factories
from tests.plans import generic_plan


async def test_recipient_lookup_uses_the_domain_and_address_keys(db: Database):
    owner = await factories.mailbox_owner(db, "alice@plans.test")
    async with db.connection() as conn:
        await execute(conn, "SET plan_cache_mode = force_generic_plan")
        found = await lookup_recipient(conn, "Alice+news", "plans.test")
        assert found.mailbox is not None
        assert found.mailbox.address_id == owner["address_id"]
        assert (await lookup_recipient(conn, "bob", "plans.test")).mailbox is None
        assert not (await lookup_recipient(conn, "alice", "elsewhere.test")).domain_hosted
        plan = await generic_plan(conn, "WITH dom AS")
    assert "domains_name_key" in plan, plan
    assert "addresses_local_part_key" in plan, plan
    assert "Seq Scan on addresses" not in plan, plan


async def test_the_keys_of_a_claims_domains_are_read_by_the_domain_key(db: Database):
    from mail.directory import key_sealer, signing_keys

    async with db.connection() as conn:
        await execute(conn, "SET plan_cache_mode = force_generic_plan")
        found = await signing_keys(conn, key_sealer("x" * 32), ["Nobody.Test.", "none.test"])
        assert found == {"Nobody.Test.": None, "none.test": None}
        plan = await generic_plan(conn, "ANY(")
    assert "domains_name_key" in plan, plan
    assert "dkim_keys_one_active" in plan, plan
