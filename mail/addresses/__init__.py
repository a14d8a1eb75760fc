"""Addresses (mailboxes) on hosted domains."""
