"""Billing: plans, the one entitlement function every gate asks, subscriptions,
the payment provider (Stripe) and its signed webhook. docs/mail.md, "Billing"."""
