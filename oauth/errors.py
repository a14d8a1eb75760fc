"""OAuth errors: one class per error code, rendering ``{error, error_description}``.

RFC 6749 5.2 shapes token-endpoint errors; RFC 7009, RFC 7662, RFC 8628 3.5
and RFC 7591 3.2.2 add their codes. Every response of this app carries
``Cache-Control: no-store`` (RFC 6749 5.1 requires it on token responses; the
other endpoints gain nothing from caching). ``invalid_client`` answers 401
with ``WWW-Authenticate`` (RFC 6749 5.2).
"""

from __future__ import annotations

from aiohttp import web

from common.web import ServiceError, json_response

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class OAuthError(ServiceError):
    """An error the client sees as ``{error, error_description}``."""

    error = "invalid_request"
    status = 400

    def __init__(self, description: str = "", *, headers: dict[str, str] | None = None) -> None:
        super().__init__(description or self.error)
        self.description = description or self.error.replace("_", " ")
        self.headers = dict(headers or {})
        # Set on authorization errors the client may be sent back with (RFC 6749 4.1.2.1).
        self.redirect_url: str | None = None

    def body(self) -> dict[str, str]:
        body = error_body(self.error, self.description)
        if self.redirect_url is not None:
            body["redirect_url"] = self.redirect_url
        return body

    def response(self) -> web.Response:
        return json_response(self.body(), status=self.status, headers={**NO_STORE, **self.headers})


# --- RFC 6749 section 5.2 and 4.1.2.1 ---------------------------------------


class InvalidRequest(OAuthError):
    error = "invalid_request"


class InvalidClient(OAuthError):
    error = "invalid_client"
    status = 401

    def __init__(self, description: str = "client authentication failed") -> None:
        super().__init__(description, headers={"WWW-Authenticate": 'Basic realm="oauth"'})


class InvalidGrant(OAuthError):
    error = "invalid_grant"


class UnauthorizedClient(OAuthError):
    error = "unauthorized_client"


class UnsupportedGrantType(OAuthError):
    error = "unsupported_grant_type"


class UnsupportedResponseType(OAuthError):
    error = "unsupported_response_type"


class InvalidScope(OAuthError):
    error = "invalid_scope"


class AccessDenied(OAuthError):
    error = "access_denied"
    status = 403


class ServerError(OAuthError):
    error = "server_error"
    status = 500


# --- RFC 7009 2.2.1 ----------------------------------------------------------


class UnsupportedTokenType(OAuthError):
    error = "unsupported_token_type"


# --- RFC 8628 3.5 (answers to a device-code poll, all 400) ------------------


class AuthorizationPending(OAuthError):
    error = "authorization_pending"


class SlowDown(OAuthError):
    error = "slow_down"


class DeviceAccessDenied(OAuthError):
    """RFC 8628 3.5 access_denied: a poll answer, so 400 rather than 403."""

    error = "access_denied"


class ExpiredToken(OAuthError):
    error = "expired_token"


# --- RFC 7591 3.2.2 (client administration) --------------------------------


class InvalidRedirectUri(OAuthError):
    error = "invalid_redirect_uri"


class InvalidClientMetadata(OAuthError):
    error = "invalid_client_metadata"


# --- our own, for the parts the RFCs leave to the server ---------------------


class TooManyAttempts(OAuthError):
    """Repeated failed client authentications: wait before trying again."""

    error = "slow_down"
    status = 429

    def __init__(
        self,
        retry_after: int,
        reason: str = "too many failed authentication attempts for this client",
    ) -> None:
        super().__init__(
            f"{reason}; retry in {retry_after} s", headers={"Retry-After": str(retry_after)}
        )


class NotFound(OAuthError):
    error = "not_found"
    status = 404


class LoginRequired(OAuthError):
    """A consent route without a signed-in user (the name OpenID Connect uses)."""

    error = "login_required"
    status = 401


# Router misses and guard refusals arrive as aiohttp HTTP errors; these are
# their names in our shape.
_ERROR_BY_KIND = {
    "bad_request": "invalid_request",
    "validation": "invalid_request",
    "unauthorized": "login_required",
    "forbidden": "access_denied",
    "not_found": "not_found",
    "method_not_allowed": "method_not_allowed",
    "conflict": "conflict",
    "rate_limited": "slow_down",
    "payload_too_large": "invalid_request",
    "unsupported_media_type": "invalid_request",
}


def error_body(error: str, description: str) -> dict[str, str]:
    return {"error": error, "error_description": description}


def render(status: int, kind: str, message: str, *, field: str | None = None) -> web.Response:
    """The renderer common.web.error_middleware calls for everything not ours.

    ``field`` is already named in the message (RFC 6749 has no place for it).
    """
    error = _ERROR_BY_KIND.get(kind, "server_error" if status >= 500 else "invalid_request")
    if status >= 500:
        message = "internal error"
    return json_response(error_body(error, message), status=status, headers=dict(NO_STORE))
