"""The outbound queue worker: MX routing, DKIM signing, SMTP delivery, retries, bounces."""
