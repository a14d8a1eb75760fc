"""The sending API (Resend's): send, batch, list, read, reschedule, cancel."""
