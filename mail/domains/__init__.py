"""Hosted mail domains: adding, reading, updating, deleting, fallback domains."""
