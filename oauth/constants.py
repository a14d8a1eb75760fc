"""The lifetimes and intervals of the spec's Limits table, plus our own choices.

ACCESS_TOKEN_TTL_SECONDS and DEVICE_POLL_INTERVAL_SECONDS are "not shown" in
the spec: an hour and five seconds are what RFC 8628 3.2, Authlib, Hydra and
node-oidc-provider default to (docs/oauth.md).
"""

from __future__ import annotations

from typing import Final

ACCESS_TOKEN_TTL_SECONDS: Final = 3600
REFRESH_TOKEN_TTL_SECONDS: Final = 30 * 24 * 3600
AUTH_CODE_TTL_SECONDS: Final = 60
DEVICE_CODE_TTL_SECONDS: Final = 600
DEVICE_POLL_INTERVAL_SECONDS: Final = 5

# RFC 8628 3.5: each slow_down adds five seconds to the interval, for good.
DEVICE_SLOW_DOWN_STEP_SECONDS: Final = 5

# Client authentication failures, per (client, source address): after this
# many failures in a window, that address's every further attempt at that
# client waits out a lock that doubles up to the cap. Other addresses are not
# affected, so a stranger cannot lock the real client out.
CLIENT_AUTH_FAILURE_LIMIT: Final = 5
# Failures of one client from all addresses together in the window: from here
# on every address is locked from its first failure (a guesser spread over
# many addresses), but an address that has not failed still gets through.
CLIENT_AUTH_CLIENT_FAILURE_LIMIT: Final = 100
CLIENT_AUTH_FAILURE_WINDOW_SECONDS: Final = 900
CLIENT_AUTH_LOCK_CAP_SECONDS: Final = 60

GRANT_AUTHORIZATION_CODE: Final = "authorization_code"
GRANT_REFRESH_TOKEN: Final = "refresh_token"
GRANT_DEVICE_CODE: Final = "urn:ietf:params:oauth:grant-type:device_code"
