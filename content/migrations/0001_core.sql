-- The CMS core: people, sessions, keys, content types, entries, revisions, activity.
-- Applied into the "content" schema; run-time SQL qualifies every table.

CREATE TABLE users (
    id             text        PRIMARY KEY,
    email          text        NOT NULL,
    name           text        NOT NULL DEFAULT '',
    role           text        NOT NULL
                   CHECK (role IN ('viewer', 'author', 'editor', 'admin', 'owner')),
    password_hash  text,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (lower(email));
-- The last-owner rule counts owners under a lock.
CREATE INDEX users_role ON users (role);

-- Sign-in sessions: only the SHA-256 of the token is stored.
CREATE TABLE sessions (
    id            bigserial   PRIMARY KEY,
    token_hash    text        NOT NULL UNIQUE,
    user_id       text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    ip            text        NOT NULL DEFAULT '',
    user_agent    text        NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Agent keys (svcagt_): a program acting as one person, capped by their role.
CREATE TABLE agent_keys (
    id            text        PRIMARY KEY,
    user_id       text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          text        NOT NULL,
    token_hash    text        NOT NULL UNIQUE,
    -- The first characters of the key, shown so people can tell keys apart.
    hint          text        NOT NULL,
    grants        text[]      NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    last_used_at  timestamptz
);
CREATE INDEX agent_keys_user ON agent_keys (user_id);

-- Delivery keys (svc_): a website reading published content of some types.
CREATE TABLE delivery_keys (
    id            text        PRIMARY KEY,
    name          text        NOT NULL,
    token_hash    text        NOT NULL UNIQUE,
    hint          text        NOT NULL,
    -- Type names this key may read; '*' means every type.
    type_scopes   text[]      NOT NULL,
    created_by    text        REFERENCES users (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    last_used_at  timestamptz
);

CREATE TABLE content_types (
    id            text        PRIMARY KEY,
    name          text        NOT NULL UNIQUE,
    label         text        NOT NULL,
    fields        jsonb       NOT NULL,
    single        boolean     NOT NULL DEFAULT false,
    preview_url   text,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE entries (
    id            text        PRIMARY KEY,
    type_id       text        NOT NULL REFERENCES content_types (id),
    slug          text        NOT NULL,
    title         text        NOT NULL,
    data          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    status        text        NOT NULL DEFAULT 'draft'
                  CHECK (status IN ('draft', 'published', 'unpublished')),
    locale        text        NOT NULL DEFAULT 'en',
    author_id     text        REFERENCES users (id) ON DELETE SET NULL,
    -- A future publication time while one is scheduled.
    publish_at    timestamptz,
    published_at  timestamptz,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    deleted_at    timestamptz,
    revision      integer     NOT NULL DEFAULT 1
);
-- Slugs are unique per type and locale, trashed entries included, so a
-- restore can never collide.
CREATE UNIQUE INDEX entries_slug ON entries (type_id, locale, slug);
CREATE INDEX entries_list ON entries (type_id, status, updated_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX entries_updated ON entries (updated_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX entries_author ON entries (author_id);
CREATE INDEX entries_trash ON entries (deleted_at DESC) WHERE deleted_at IS NOT NULL;

CREATE TABLE revisions (
    id            bigserial   PRIMARY KEY,
    entry_id      text        NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number        integer     NOT NULL,
    title         text        NOT NULL,
    slug          text        NOT NULL,
    locale        text        NOT NULL,
    status        text        NOT NULL,
    data          jsonb       NOT NULL,
    actor         jsonb       NOT NULL,
    note          text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    UNIQUE (entry_id, number)
);

CREATE TABLE activity (
    id            bigserial   PRIMARY KEY,
    at            timestamptz NOT NULL,
    actor_kind    text        NOT NULL CHECK (actor_kind IN ('user', 'agent_key', 'system')),
    user_id       text,
    key_id        text,
    actor_name    text        NOT NULL DEFAULT '',
    action        text        NOT NULL,
    subject_kind  text        NOT NULL,
    subject_id    text        NOT NULL,
    summary       jsonb       NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX activity_at ON activity (at DESC, id DESC);
CREATE INDEX activity_subject ON activity (subject_kind, subject_id);
