"""The mail service as the gateway builds it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta

from aiohttp import web

from common.crypto import Sealer
from common.jobs import Job
from common.migrations import MigrationSet
from common.openapi import publish
from common.outbound import OutboundClient
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from common.web import error_middleware
from mail import errors
from mail.accounts import service as accounts_service
from mail.accounts import store as accounts_store
from mail.accounts.public import PublicAccounts
from mail.apikeys.access import api_key_middleware
from mail.auth import store as sessions_store
from mail.auth.sessions import session_middleware
from mail.billing import jobs as billing_jobs
from mail.billing.settings import load_billing_settings
from mail.context import MAIL, MailContext
from mail.dkim.keys import dkim_sealer
from mail.dns.lookup import Resolver
from mail.domains import service as domains_service
from mail.domains.settings import load_hosting_settings
from mail.openapi import PROFILE
from mail.outbox.store import outbox_sealer
from mail.pages import install as install_pages
from mail.pages.fallback import form_fallback_middleware
from mail.recovery import service as recovery_service
from mail.routes import ROUTE_TABLES
from mail.sending import service as sending_service
from mail.sending import store as sending_store
from mail.settings import load_mail_settings
from mail.transfers.runner import TransferRunner
from mail.web.csrf import csrf_middleware
from mail.web.ratelimit import rate_limit_middleware
from mail.webhooks import delivery as webhook_delivery
from mail.webhooks import store as webhooks_store
from mail.webhooks.store import webhook_sealer
from mail.webmail import store as webmail_store
from mail.webmail.live import install as install_webmail_live
from mail.webmail.sessions import webmail_middleware
from mta import mailstore

MIGRATIONS = MigrationSet.beside(__file__)

SWEEP_JOB = "mail.sweep"
# The OpenAPI document of every route below, and its page for people (docs/mail.md).
OPENAPI_PATH = "/api/openapi.json"
DOCS_PATH = "/api/docs"
SWEEP_EVERY_SECONDS = 3600
ROLLUP_JOB = "mail.event_rollup"
ROLLUP_EVERY_SECONDS = 3600


class MailService:
    name = "mail"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        hosting = load_hosting_settings(runtime.settings)
        config = load_mail_settings(runtime.settings)
        self.context = MailContext(
            runtime=runtime,
            config=config,
            limiter=RateLimiter(runtime.db, runtime.clock),
            totp_sealer=Sealer(runtime.settings.secret, "mail.totp"),
            outbox_sealer=outbox_sealer(runtime.settings.secret),
            hosting=hosting,
            dkim_sealer=dkim_sealer(runtime.settings.secret),
            resolver=Resolver(hosting.dns_resolvers, timeout=hosting.dns_timeout_seconds),
            webhook_sealer=webhook_sealer(runtime.settings.secret),
            outbound=OutboundClient(allow_private=config.webhook_allow_private),
            billing=load_billing_settings(runtime.settings),
        )
        # The public face of accounts for other packages (the gateway's OAuth host).
        self.accounts = PublicAccounts(self.context)
        runtime.jobs.register(accounts_service.FORGOT_JOB, self._forgot)
        runtime.jobs.register(SWEEP_JOB, self._sweep, every=SWEEP_EVERY_SECONDS)
        # Domains, DNS, DKIM, addresses and mail-client discovery (mail/domains/...).
        runtime.jobs.register(
            domains_service.CHECK_JOB, self._dns_check, every=hosting.dns_check_interval_seconds
        )
        # Mail transfers from other IMAP servers (mail/transfers/runner.py): started by jobs,
        # run as tasks of this process, handed back when it stops.
        self.transfers = TransferRunner(self.context)
        self.transfers.register(runtime.jobs)
        # Webhooks: the event log fanned out to endpoints, then one job per try.
        runtime.jobs.register(
            webhook_delivery.FANOUT_JOB,
            self._webhook_fan_out,
            every=webhook_delivery.FANOUT_EVERY_SECONDS,
        )
        runtime.jobs.register(webhook_delivery.DELIVER_JOB, self._webhook_deliver)
        # The Overview's daily counts: closed days of the event log, rolled up.
        runtime.jobs.register(ROLLUP_JOB, self._roll_up_events, every=ROLLUP_EVERY_SECONDS)
        # Mailbox recovery: the lookup and the link happen in a job (identical answers).
        runtime.jobs.register(recovery_service.REQUEST_JOB, self._recovery_request)
        # Billing: subscriptions past their period renew or lapse (mail/billing/).
        billing_jobs.register(self.context)

    def create_app(self, *, prefix: str = "") -> web.Application:
        # Mail always sits at a root: mail clients look for its paths there.
        # Order matters: errors outermost; the session is known before the
        # rate limit picks a principal; CSRF is checked before any handler.
        app = web.Application(
            middlewares=[
                error_middleware(errors.render),
                session_middleware,
                webmail_middleware,
                # A Bearer API key on /api/ (replaces the cookie's account; mail/apikeys/).
                api_key_middleware,
                # A form posted by the browser itself (its script did not run): a page.
                form_fallback_middleware,
                rate_limit_middleware,
                csrf_middleware,
            ]
        )
        app[MAIL] = self.context
        for table in ROUTE_TABLES:
            app.add_routes(table)
        publish(app, PROFILE, json_path=OPENAPI_PATH, html_path=DOCS_PATH)
        # The pages for people (mail/pages/): outside /api and outside the document.
        install_pages(app)
        # Webmail's live updates through the process's notification hub (mail/webmail/live.py).
        install_webmail_live(app, self.runtime.notifications)
        return app

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return self._lifespan()

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        # The operator's PLANS_FILE (or the built-in free plan) into mail.plans.
        await billing_jobs.sync_plans(self.context)
        if self.runtime.settings.run_workers:
            # Transfers another process handed back when it stopped resume now.
            await self.transfers.start()
        try:
            async with self.runtime.notifications.running():
                if self.runtime.settings.run_workers:
                    # A process that runs the workers fans events out as they commit.
                    async with webhook_delivery.listen(self.context):
                        yield
                else:
                    yield
        finally:
            await self.transfers.close()
            await self.context.outbound.close()

    async def _roll_up_events(self, job: Job) -> None:
        async with self.runtime.db.transaction() as conn:
            await mailstore.roll_up_event_counts(conn, self.runtime.clock.now())

    async def _recovery_request(self, job: Job) -> None:
        await recovery_service.run_request_job(self.context, job)

    async def _webhook_fan_out(self, job: Job) -> None:
        await webhook_delivery.fan_out(self.context)

    async def _webhook_deliver(self, job: Job) -> None:
        await webhook_delivery.run_delivery_job(self.context, job)

    async def _forgot(self, job: Job) -> None:
        await accounts_service.run_forgot_job(self.context, job)

    async def _dns_check(self, job: Job) -> None:
        await domains_service.check_due(self.context, self.runtime.clock.now())

    async def _sweep(self, job: Job) -> None:
        now = self.runtime.clock.now()
        async with self.runtime.db.connection() as conn:
            await sessions_store.sweep(conn, now)
            await webmail_store.sweep(conn, now)
            await accounts_store.sweep_tokens(conn, now)
            # Idempotency-Key answers are kept 24 hours (docs/mail.md, "Sending API").
            await sending_store.sweep_keys(conn, now - sending_service.IDEMPOTENCY_WINDOW)
            await webhooks_store.sweep(conn, now - timedelta(days=webhooks_store.RETENTION_DAYS))
