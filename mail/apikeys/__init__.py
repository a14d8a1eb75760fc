"""API keys of the sending API: created and revoked by a session, used as Bearer tokens."""
