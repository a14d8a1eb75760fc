"""Apple configuration profiles for one address: the panel owner's, or the signed-in mailbox's."""

from __future__ import annotations

import asyncio

from mail.addresses import service as addresses
from mail.context import MailContext
from mail.discovery import apple_profile, client_config
from mail.errors import conflict
from mail.webmail.store import WebmailSession


async def address_profile(
    ctx: MailContext, account_id: str, address_id: str
) -> apple_profile.AppleProfile:
    """The profile of an address this account owns; 404 for any other."""
    address = await addresses.get(ctx, account_id, address_id)
    return await profile(ctx, address.email, address.display_name)


async def mailbox_profile(ctx: MailContext, session: WebmailSession) -> apple_profile.AppleProfile:
    """The profile of the mailbox signed into webmail."""
    return await profile(ctx, session.email, session.display_name)


async def profile(ctx: MailContext, email: str, display_name: str) -> apple_profile.AppleProfile:
    hosting = ctx.hosting
    try:
        body = apple_profile.render(
            email,
            display_name,
            client_config.endpoints(hosting),
            hostname=hosting.mail_hostname,
            organization=ctx.config.totp_issuer,
        )
    except apple_profile.NoMailAccess as exc:
        raise conflict(str(exc)) from None
    # The files are read per request and parsed again only when they change.
    signer = await asyncio.to_thread(
        apple_profile.load_signer, hosting.tls_cert_file, hosting.tls_key_file
    )
    if signer is not None:
        body = apple_profile.sign(body, signer)
    return apple_profile.AppleProfile(apple_profile.filename(email), body)
