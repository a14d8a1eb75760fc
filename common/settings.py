"""Settings read from the environment, in one place.

Only this module reads ``os.environ``. It builds a frozen :class:`Settings`
that every other module receives; tests construct one directly. Services keep
their own typed settings, parsed from ``Settings.environ`` with the readers
below so every variable is validated at start and fails with one clear line.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlsplit

MIN_SECRET_LENGTH = 32
MIN_METRICS_TOKEN_LENGTH = 16
DEV_SECRET_FILE = "secret"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# /metrics without a token: the machine itself only.
DEFAULT_METRICS_ALLOW: tuple[Network, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)
LOG_FORMATS = ("text", "json")


class SettingsError(Exception):
    """A setting is missing or malformed; the message is one line for the operator."""


@dataclass(frozen=True)
class Settings:
    port: int = 4300
    host: str = "0.0.0.0"
    public_url: str = "http://localhost:4300"
    database_url: str | None = None
    db_pool_size: int = 5
    secret: str = ""
    app_env: str = "development"
    trusted_proxies: tuple[Network, ...] = ()
    data_dir: Path = Path("var")
    # host=service pairs: requests for that Host are served by that service at the root.
    host_mounts: tuple[tuple[str, str], ...] = ()
    # Seconds a graceful shutdown waits for in-flight requests.
    shutdown_timeout: float = 10.0
    # Job workers run in this process (off for a pure API node).
    run_workers: bool = True
    # Serving processes sharing the port (SO_REUSEPORT); WEB_CONCURRENCY.
    workers: int = 1
    # Seconds between SIGTERM and closing the listeners, /readyz answering 503
    # meanwhile, so a load balancer stops sending before anything is refused.
    shutdown_drain: float = 0.0
    # "text" (one human line per record) or "json" (one object per line).
    log_format: str = "text"
    # One log line per request (method, route template, status, duration).
    access_log: bool = False
    # Who may read /metrics: these CIDRs, or a bearer METRICS_TOKEN.
    metrics_allow: tuple[Network, ...] = DEFAULT_METRICS_ALLOW
    metrics_token: str = ""
    # The raw environment snapshot, for service settings parsed elsewhere.
    environ: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def is_production(self) -> bool:
        return self.app_env == "production"

    @property
    def is_development(self) -> bool:
        return self.app_env == "development"

    @property
    def public_is_https(self) -> bool:
        return self.public_url.startswith("https://")

    @property
    def public_origin(self) -> str:
        parts = urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def pgdata_dir(self) -> Path:
        return self.data_dir / "pgdata"


# --- typed readers, shared by the services' own settings ------------------


def read_str(env: Mapping[str, str], name: str, default: str = "") -> str:
    value = env.get(name)
    return default if value is None or value == "" else value


def read_int(
    env: Mapping[str, str],
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{name} must be at most {maximum}, got {value}")
    return value


def read_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw.strip())
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def read_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")


def read_list(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    raw = env.get(name) or ""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def read_networks(env: Mapping[str, str], name: str) -> tuple[Network, ...]:
    nets: list[Network] = []
    for item in read_list(env, name):
        try:
            nets.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise SettingsError(f"{name}: {item!r} is not an IP address or CIDR") from None
    return tuple(nets)


def read_url(env: Mapping[str, str], name: str, default: str) -> str:
    value = read_str(env, name, default).rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{name} must be an absolute http(s) URL, got {value!r}")
    return value


SERVICES = ("oauth", "content", "mail")


def _read_host_mounts(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    mounts = []
    for item in read_list(env, "HOST_MOUNTS"):
        host, sep, service = item.partition("=")
        if not sep or service.strip() not in SERVICES or not host.strip():
            raise SettingsError(
                f"HOST_MOUNTS entries are host=service with service one of "
                f"{', '.join(SERVICES)}; got {item!r}"
            )
        mounts.append((host.strip().lower(), service.strip()))
    return tuple(mounts)


def _read_app_env(env: Mapping[str, str]) -> str:
    # APP_ENV wins; NODE_ENV (the spec's name) is honoured when APP_ENV is unset.
    value = read_str(env, "APP_ENV") or read_str(env, "NODE_ENV") or "development"
    return value.strip().lower()


APP_ENVS = ("development", "test", "production")


def _read_choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    value = read_str(env, name, choices[0]).strip().lower()
    if value not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def load_settings(
    environ: Mapping[str, str] | None = None, *, production: bool = False
) -> Settings:
    """Build and validate settings from the environment (``os.environ`` by default).

    ``production`` is set by the production entry points (``make start``, the
    Docker image): they refuse an environment that still says development.
    """
    env = dict(os.environ if environ is None else environ)
    settings = Settings(
        port=read_int(env, "PORT", 4300, minimum=0, maximum=65535),
        host=read_str(env, "HOST", "0.0.0.0"),
        public_url=read_url(env, "PUBLIC_URL", "http://localhost:4300"),
        database_url=read_str(env, "DATABASE_URL") or None,
        db_pool_size=read_int(env, "DB_POOL_SIZE", 5, minimum=1, maximum=500),
        secret=read_str(env, "SECRET"),
        app_env=_read_app_env(env),
        trusted_proxies=read_networks(env, "TRUSTED_PROXIES"),
        data_dir=Path(read_str(env, "DATA_DIR", "var")),
        host_mounts=_read_host_mounts(env),
        shutdown_timeout=read_float(env, "SHUTDOWN_TIMEOUT", 10.0),
        run_workers=read_bool(env, "RUN_WORKERS", True),
        workers=read_int(env, "WEB_CONCURRENCY", 1, minimum=1, maximum=64),
        shutdown_drain=read_float(env, "SHUTDOWN_DRAIN", 0.0),
        log_format=_read_choice(env, "LOG_FORMAT", LOG_FORMATS),
        access_log=read_bool(env, "ACCESS_LOG", False),
        metrics_allow=(
            read_networks(env, "METRICS_ALLOW") if "METRICS_ALLOW" in env else DEFAULT_METRICS_ALLOW
        ),
        metrics_token=read_str(env, "METRICS_TOKEN"),
        environ=MappingProxyType(env),
    )
    return validate(settings, production=production)


def validate(settings: Settings, *, production: bool = False) -> Settings:
    """Refuse unsafe production settings; fill a development secret."""
    if settings.app_env not in APP_ENVS:
        raise SettingsError(
            f"APP_ENV must be one of {', '.join(APP_ENVS)}, got {settings.app_env!r}"
        )
    if settings.shutdown_drain < 0:
        raise SettingsError("SHUTDOWN_DRAIN must be 0 or more seconds")
    if settings.metrics_token and len(settings.metrics_token) < MIN_METRICS_TOKEN_LENGTH:
        raise SettingsError(f"METRICS_TOKEN must be at least {MIN_METRICS_TOKEN_LENGTH} characters")
    if production and settings.app_env == "development":
        raise SettingsError("APP_ENV/NODE_ENV is development; production needs production")
    if settings.is_production:
        if len(settings.secret) < MIN_SECRET_LENGTH:
            raise SettingsError(
                f"SECRET must be at least {MIN_SECRET_LENGTH} characters in production"
            )
        # The test harness's cheap password hashing (common/passwords.use_test_cost).
        if "PASSWORD_HASH_COST" in settings.environ:
            raise SettingsError("PASSWORD_HASH_COST is for the test suite; production refuses it")
        return settings
    if not settings.secret:
        return replace(settings, secret=development_secret(settings.data_dir))
    return settings


def development_secret(data_dir: Path) -> str:
    """A secret generated once and kept under DATA_DIR, so sessions survive restarts."""
    path = data_dir / DEV_SECRET_FILE
    if path.exists():
        value = path.read_text().strip()
        if len(value) >= MIN_SECRET_LENGTH:
            return value
    data_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(48)
    # Written with owner-only permissions: it seals stored credentials.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value
