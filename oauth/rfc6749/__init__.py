"""RFC 6749 (as OAuth 2.1 narrows it): client authentication, authorization and grants."""
