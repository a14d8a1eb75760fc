"""Signing in: stored sessions behind svc_session, login/logout, two-factor, CSRF."""
