"""Billing's env variables, parsed once (docs/mail.md, "Billing")."""

from __future__ import annotations

from dataclasses import dataclass

from common.settings import Settings, read_int, read_str, read_url

STRIPE_API = "https://api.stripe.com"


@dataclass(frozen=True)
class BillingSettings:
    # A TOML or JSON file of plans (docs/mail.md "The plans file"); empty: the built-in free plan.
    plans_file: str = ""
    stripe_secret_key: str = ""
    stripe_webhook_secret: str = ""
    # Tests point this at a local stand-in speaking Stripe's wire format.
    stripe_api_base: str = STRIPE_API
    # Stripe's own libraries refuse a signed event older than five minutes.
    webhook_tolerance_seconds: int = 300
    # A paid period not renewed stays entitled this long (Stripe retries a failed
    # payment over days) before the account lapses to the default plan.
    grace_seconds: int = 3 * 86400
    stripe_timeout_seconds: int = 20

    @property
    def provider(self) -> str:
        return "stripe" if self.stripe_secret_key else "none"


def load_billing_settings(settings: Settings) -> BillingSettings:
    env = settings.environ
    return BillingSettings(
        plans_file=read_str(env, "PLANS_FILE"),
        stripe_secret_key=read_str(env, "STRIPE_SECRET_KEY"),
        stripe_webhook_secret=read_str(env, "STRIPE_WEBHOOK_SECRET"),
        stripe_api_base=read_url(env, "STRIPE_API_BASE", STRIPE_API).rstrip("/"),
        webhook_tolerance_seconds=read_int(env, "STRIPE_WEBHOOK_TOLERANCE", 300, minimum=1),
        grace_seconds=read_int(env, "BILLING_GRACE_SECONDS", 3 * 86400, minimum=0),
    )
