-- Plugins and design surfaces (issue 26).

-- One row per plugin this site has seen in PLUGIN_DIR (or the host passed):
-- its state survives restarts and a plugin that is missing or fails to load
-- for a while. settings holds only the values an admin set; the declared
-- defaults fill in the rest when read (content/plugins/service.py).
CREATE TABLE plugins (
    name          text        PRIMARY KEY,
    enabled       boolean     NOT NULL DEFAULT false,
    -- An enabled plugin whose hook raised or timed out stops running until an
    -- admin enables it again (WordPress's paused plugin).
    paused        boolean     NOT NULL DEFAULT false,
    settings      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    version       text        NOT NULL DEFAULT '',
    -- The last error: where ('load' or 'hook:<event>'), what and when.
    error         text,
    error_where   text,
    error_at      timestamptz,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- Written once, by the first start of the site: PLUGIN_AUTOENABLE applies on
-- a fresh install only, so a later start never enables what an admin disabled.
CREATE TABLE plugin_install (
    id               boolean     PRIMARY KEY DEFAULT true CHECK (id),
    autoenabled      text[]      NOT NULL,
    installed_at     timestamptz NOT NULL
);
-- A site that already has people when this migration runs is not a fresh
-- install: upgrading it must not enable anything.
INSERT INTO plugin_install (id, autoenabled, installed_at)
SELECT true, '{}', now() WHERE EXISTS (SELECT 1 FROM users);

-- Overrides of the properties of design surfaces (declared by the host or a
-- plugin); kept while their surface is absent, delivered while it is declared.
CREATE TABLE design_overrides (
    surface       text        NOT NULL,
    property      text        NOT NULL,
    value         text        NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (surface, property)
);
