"""JMAP limits and settings (the session object's ``capabilities[core]`` and more)."""

from __future__ import annotations

from dataclasses import dataclass

from common.settings import Settings, read_bool, read_int


@dataclass(frozen=True)
class JmapSettings:
    # RFC 8620 2 core capability limits, advertised in the session and enforced.
    # Fastmail advertises 50 MB uploads, 4 concurrent, 10 MB requests, 16 calls,
    # 500 objects per /get and /set; Stalwart 50 MB / 4 / 10 MB / 16 / 500 / 500.
    max_size_upload: int = 50 * 1024 * 1024
    max_concurrent_upload: int = 4
    max_size_request: int = 10 * 1024 * 1024
    max_concurrent_requests: int = 4
    max_calls_in_request: int = 16
    max_objects_in_get: int = 500
    max_objects_in_set: int = 500
    # RFC 8621 mail capability.
    max_mailboxes_per_email: int = 32
    max_mailbox_depth: int = 10
    max_size_mailbox_name: int = 255
    max_size_attachments_per_email: int = 50 * 1024 * 1024
    # Authenticated requests (API calls, uploads, downloads) per principal per
    # minute. A client's initial sync or a folder full of attachments makes
    # bursts of a few hundred; 1,200/min (20/s sustained) is far above them
    # and far below what would hurt the server.
    requests_per_minute: int = 1200
    # EventSource: the smallest ping interval a client may ask for, and how
    # long a stream may stay open before the server ends it (clients reconnect).
    min_ping_seconds: int = 5
    max_stream_seconds: int = 3600
    # Changes /changes keeps per account (older ones are pruned: cannotCalculateChanges).
    changes_keep_days: int = 30
    # Uploaded blobs not used by anything are deleted after this (RFC 8620 6.1: >= 1 hour).
    upload_keep_hours: int = 24
    # PushSubscription: who the verification POST may reach (only public
    # addresses unless this is on, for tests on loopback).
    push_allow_private: bool = False


def load_jmap_settings(settings: Settings) -> JmapSettings:
    env = settings.environ
    return JmapSettings(
        max_size_upload=read_int(env, "JMAP_MAX_SIZE_UPLOAD", 50 * 1024 * 1024, minimum=1024),
        max_concurrent_upload=read_int(env, "JMAP_MAX_CONCURRENT_UPLOAD", 4, minimum=1),
        max_size_request=read_int(env, "JMAP_MAX_SIZE_REQUEST", 10 * 1024 * 1024, minimum=1024),
        max_concurrent_requests=read_int(env, "JMAP_MAX_CONCURRENT_REQUESTS", 4, minimum=1),
        max_calls_in_request=read_int(env, "JMAP_MAX_CALLS_IN_REQUEST", 16, minimum=1),
        max_objects_in_get=read_int(env, "JMAP_MAX_OBJECTS_IN_GET", 500, minimum=1),
        max_objects_in_set=read_int(env, "JMAP_MAX_OBJECTS_IN_SET", 500, minimum=1),
        requests_per_minute=read_int(env, "JMAP_REQUESTS_PER_MINUTE", 1200, minimum=1),
        min_ping_seconds=read_int(env, "JMAP_MIN_PING_SECONDS", 5, minimum=1),
        max_stream_seconds=read_int(env, "JMAP_MAX_STREAM_SECONDS", 3600, minimum=10),
        changes_keep_days=read_int(env, "JMAP_CHANGES_KEEP_DAYS", 30, minimum=1),
        upload_keep_hours=read_int(env, "JMAP_UPLOAD_KEEP_HOURS", 24, minimum=1),
        push_allow_private=read_bool(env, "JMAP_PUSH_ALLOW_PRIVATE", False),
    )
