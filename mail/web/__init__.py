"""HTTP conventions every mail route uses: bodies, lists, ownership, CSRF, rate limits."""
