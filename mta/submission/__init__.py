"""Message submission (RFC 6409) on 587 with STARTTLS and 465 with implicit TLS (RFC 8314)."""
