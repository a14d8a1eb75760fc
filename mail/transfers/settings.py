"""The transfer settings, parsed once from ``Settings.environ`` (docs/mail.md#settings)."""

from __future__ import annotations

from dataclasses import dataclass

from common.settings import Settings, read_bool, read_int, read_str


@dataclass(frozen=True)
class TransferSettings:
    # Transfers one process runs at once; more wait in state queued.
    max_concurrent: int = 2
    # Source hosts on private, loopback or link-local addresses (SSRF guard off).
    allow_private: bool = False
    # TLS mode "none" for a host that is not loopback (the password crosses in clear).
    allow_plaintext: bool = False
    # Connecting, greeting and signing in, each.
    connect_timeout: float = 10.0
    # One IMAP command (a 50 MB message must arrive within it).
    command_timeout: float = 120.0
    # How often a running transfer says it is alive and looks for a cancel.
    heartbeat_seconds: float = 1.0
    # A running transfer silent this long is taken over by another process.
    stale_seconds: int = 30
    # Larger source messages are skipped and counted as errors.
    max_message_bytes: int = 50 * 1024 * 1024
    # A PEM file of certificate authorities trusted besides the system's (a private CA).
    tls_ca_file: str = ""


def load_transfer_settings(settings: Settings) -> TransferSettings:
    env = settings.environ
    return TransferSettings(
        max_concurrent=read_int(env, "TRANSFER_MAX_CONCURRENT", 2, minimum=1),
        allow_private=read_bool(env, "TRANSFER_ALLOW_PRIVATE", False),
        allow_plaintext=read_bool(env, "TRANSFER_ALLOW_PLAINTEXT", False),
        connect_timeout=float(read_int(env, "TRANSFER_CONNECT_TIMEOUT", 10, minimum=1)),
        command_timeout=float(read_int(env, "TRANSFER_COMMAND_TIMEOUT", 120, minimum=1)),
        stale_seconds=read_int(env, "TRANSFER_STALE_SECONDS", 30, minimum=2),
        max_message_bytes=read_int(
            env, "TRANSFER_MAX_MESSAGE_BYTES", 50 * 1024 * 1024, minimum=1024
        ),
        tls_ca_file=read_str(env, "TRANSFER_TLS_CA_FILE"),
    )
