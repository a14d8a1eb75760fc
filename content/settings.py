"""The CMS's own environment variables, read and validated in one place.

``common.settings`` reads the shared ones (PORT, PUBLIC_URL, DATABASE_URL,
SECRET, NODE_ENV/APP_ENV, TRUSTED_PROXIES ...) and refuses a production start
with a short SECRET or a development environment. The variables below belong
to the CMS; they are parsed here from the environment snapshot with the
typed readers, so a bad value stops the start with one clear line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from email_validator import EmailNotValidError, validate_email

from common.settings import (
    Settings,
    SettingsError,
    read_bool,
    read_int,
    read_list,
    read_str,
    read_url,
)

MAX_UPLOAD_BYTES_DEFAULT = 25 * 1024 * 1024
MIN_PASSWORD_LENGTH = 8
STORAGE_DRIVERS = ("local", "s3")
_OAUTH_SUFFIXES = ("CLIENT_ID", "CLIENT_SECRET", "AUTHORIZE_URL", "TOKEN_URL", "SCOPES")
# A plugin's name (content/plugins/interface.py), as PLUGIN_AUTOENABLE lists it.
PLUGIN_NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
_OAUTH_RE = re.compile(r"^(AI|SOCIAL)_OAUTH_([A-Z0-9]+)_(" + "|".join(_OAUTH_SUFFIXES) + r")$")


@dataclass(frozen=True)
class OAuthClientEnv:
    """AI_OAUTH_<PROVIDER>_* or SOCIAL_OAUTH_<NETWORK>_* for one provider."""

    client_id: str = ""
    client_secret: str = ""
    authorize_url: str = ""
    token_url: str = ""
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bootstrap:
    email: str
    password: str
    name: str


@dataclass(frozen=True)
class ContentSettings:
    delivery_origins: tuple[str, ...] = ()
    webhook_allow_private: bool = False
    storage_driver: str = "local"
    storage_local_dir: Path = Path("var/media")
    s3_endpoint: str = ""
    s3_bucket: str = ""
    s3_region: str = ""
    s3_access_key: str = ""
    s3_secret_key: str = ""
    s3_public_url: str = ""
    max_upload_bytes: int = MAX_UPLOAD_BYTES_DEFAULT
    plugin_dir: Path | None = None
    plugin_autoenable: tuple[str, ...] = ()
    bootstrap: Bootstrap | None = None
    ai_oauth: Mapping[str, OAuthClientEnv] = field(default_factory=dict)
    social_oauth: Mapping[str, OAuthClientEnv] = field(default_factory=dict)
    # SOCIAL_<NETWORK>_API_URL: a network's API base (a local stand-in), by network.
    social_api: Mapping[str, str] = field(default_factory=dict)


def _origins(env: Mapping[str, str]) -> tuple[str, ...]:
    out = []
    for item in read_list(env, "DELIVERY_ORIGINS"):
        if item == "*":
            out.append(item)
            continue
        origin = read_url({"DELIVERY_ORIGINS": item}, "DELIVERY_ORIGINS", item)
        if origin.count("/") > 2:
            raise SettingsError(
                f"DELIVERY_ORIGINS entries are origins without a path, got {item!r}"
            )
        out.append(origin)
    return tuple(out)


def _bootstrap(env: Mapping[str, str]) -> Bootstrap | None:
    email = read_str(env, "BOOTSTRAP_EMAIL")
    password = read_str(env, "BOOTSTRAP_PASSWORD")
    name = read_str(env, "BOOTSTRAP_NAME")
    if not email and not password:
        if name:
            raise SettingsError("BOOTSTRAP_NAME needs BOOTSTRAP_EMAIL and BOOTSTRAP_PASSWORD")
        return None
    if not email or not password:
        raise SettingsError("BOOTSTRAP_EMAIL and BOOTSTRAP_PASSWORD go together")
    try:
        email = validate_email(email, check_deliverability=False).normalized
    except EmailNotValidError as exc:
        raise SettingsError(f"BOOTSTRAP_EMAIL is not an email address: {exc}") from None
    if len(password) < MIN_PASSWORD_LENGTH:
        raise SettingsError(f"BOOTSTRAP_PASSWORD must be at least {MIN_PASSWORD_LENGTH} characters")
    return Bootstrap(email=email, password=password, name=name or email.split("@", 1)[0])


def _oauth_clients(env: Mapping[str, str], family: str) -> dict[str, OAuthClientEnv]:
    found: dict[str, dict[str, str]] = {}
    for name, value in env.items():
        match = _OAUTH_RE.match(name)
        if match and match.group(1) == family and value.strip():
            found.setdefault(match.group(2).lower(), {})[match.group(3)] = name
    clients = {}
    for provider, names in found.items():
        for suffix in ("AUTHORIZE_URL", "TOKEN_URL"):
            if suffix in names:
                read_url(env, names[suffix], "")
        clients[provider] = OAuthClientEnv(
            client_id=read_str(env, names.get("CLIENT_ID", "")),
            client_secret=read_str(env, names.get("CLIENT_SECRET", "")),
            authorize_url=read_str(env, names.get("AUTHORIZE_URL", "")).rstrip("/"),
            token_url=read_str(env, names.get("TOKEN_URL", "")).rstrip("/"),
            scopes=read_list(env, names["SCOPES"]) if "SCOPES" in names else (),
        )
    return clients


def _plugins(env: Mapping[str, str]) -> tuple[Path | None, tuple[str, ...]]:
    raw = read_str(env, "PLUGIN_DIR")
    directory = Path(raw) if raw else None
    if directory is not None and not directory.is_dir():
        raise SettingsError(f"PLUGIN_DIR {raw!r} is not a directory")
    names = read_list(env, "PLUGIN_AUTOENABLE")
    for name in names:
        if not PLUGIN_NAME_RE.match(name):
            raise SettingsError(
                f"PLUGIN_AUTOENABLE lists plugin names (lowercase, digits, hyphens), got {name!r}"
            )
    return directory, names


def load_content_settings(settings: Settings) -> ContentSettings:
    env = settings.environ
    driver = read_str(env, "STORAGE_DRIVER", "local").lower()
    if driver not in STORAGE_DRIVERS:
        raise SettingsError(f"STORAGE_DRIVER must be local or s3, got {driver!r}")
    s3 = {
        name: read_str(env, name)
        for name in ("S3_ENDPOINT", "S3_BUCKET", "S3_REGION", "S3_ACCESS_KEY", "S3_SECRET_KEY")
    }
    if driver == "s3":
        missing = [n for n in ("S3_BUCKET", "S3_ACCESS_KEY", "S3_SECRET_KEY") if not s3[n]]
        if missing:
            raise SettingsError(f"STORAGE_DRIVER=s3 needs {', '.join(missing)}")
    if s3["S3_ENDPOINT"]:
        read_url(env, "S3_ENDPOINT", "")
    public = read_url(env, "S3_PUBLIC_URL", "") if read_str(env, "S3_PUBLIC_URL") else ""
    plugin_dir, autoenable = _plugins(env)
    return ContentSettings(
        delivery_origins=_origins(env),
        webhook_allow_private=read_bool(env, "WEBHOOK_ALLOW_PRIVATE", False),
        storage_driver=driver,
        # Not DATA_DIR/blobs: deleting a media file must never reach a mail blob
        # that happens to have the same bytes.
        storage_local_dir=Path(
            read_str(env, "STORAGE_LOCAL_DIR", str(settings.data_dir / "media"))
        ),
        s3_endpoint=s3["S3_ENDPOINT"].rstrip("/"),
        s3_bucket=s3["S3_BUCKET"],
        s3_region=s3["S3_REGION"],
        s3_access_key=s3["S3_ACCESS_KEY"],
        s3_secret_key=s3["S3_SECRET_KEY"],
        s3_public_url=public,
        max_upload_bytes=read_int(
            env, "MAX_UPLOAD_BYTES", MAX_UPLOAD_BYTES_DEFAULT, minimum=1, maximum=2**40
        ),
        plugin_dir=plugin_dir,
        plugin_autoenable=autoenable,
        bootstrap=_bootstrap(env),
        ai_oauth=_oauth_clients(env, "AI"),
        social_oauth=_oauth_clients(env, "SOCIAL"),
        social_api=_social_api(env),
    )


_SOCIAL_API_RE = re.compile(r"^SOCIAL_([A-Z0-9]+)_API_URL$")


def _social_api(env: Mapping[str, str]) -> dict[str, str]:
    """SOCIAL_<NETWORK>_API_URL: validated URLs, keyed by the network in lower case."""
    out = {}
    for name, value in env.items():
        match = _SOCIAL_API_RE.match(name)
        if match and value.strip():
            out[match.group(1).lower()] = read_url(env, name, "").rstrip("/")
    return out
