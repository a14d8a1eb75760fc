"""Sieve (RFC 5228) filters: compile with sievelib, run against a message on delivery."""
