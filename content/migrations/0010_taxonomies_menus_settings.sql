-- Taxonomies and their terms, entries filed under terms, menus, site settings
-- (issue 17, items 4-6). Applied into the "content" schema.

CREATE TABLE taxonomies (
    id            text        PRIMARY KEY,
    -- The taxonomy's identifier in URLs (/api/taxonomies/:slug); it never changes.
    slug          text        NOT NULL UNIQUE,
    name          text        NOT NULL,
    -- Hierarchical taxonomies (categories) give terms a parent; flat ones (tags) do not.
    hierarchical  boolean     NOT NULL DEFAULT false,
    -- The two the spec names; they can be renamed but not deleted.
    builtin       boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

INSERT INTO taxonomies (id, slug, name, hierarchical, builtin, created_at, updated_at) VALUES
    ('categories', 'categories', 'Categories', true, true, now(), now()),
    ('tags', 'tags', 'Tags', false, true, now(), now());

CREATE TABLE terms (
    id            text        PRIMARY KEY,
    taxonomy_id   text        NOT NULL REFERENCES taxonomies (id) ON DELETE CASCADE,
    slug          text        NOT NULL,
    name          text        NOT NULL,
    description   text        NOT NULL DEFAULT '',
    -- Only in a hierarchical taxonomy; a deleted parent's children move up (service).
    parent_id     text        REFERENCES terms (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    UNIQUE (taxonomy_id, slug)
);
CREATE INDEX terms_parent ON terms (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX terms_slug ON terms (slug);

-- An entry filed under terms, in the order given.
CREATE TABLE entry_terms (
    entry_id      text        NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    term_id       text        NOT NULL REFERENCES terms (id) ON DELETE CASCADE,
    position      integer     NOT NULL,
    PRIMARY KEY (entry_id, term_id)
);
-- The entries list's ?term= filter.
CREATE INDEX entry_terms_term ON entry_terms (term_id);

-- Named trees of links; items is the tree exactly as saved (menus/service.py checks it).
CREATE TABLE menus (
    id            text        PRIMARY KEY,
    name          text        NOT NULL UNIQUE,
    label         text        NOT NULL,
    items         jsonb       NOT NULL DEFAULT '[]'::jsonb,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- The site's settings: one row, always there.
CREATE TABLE site_settings (
    id            boolean     PRIMARY KEY DEFAULT true CHECK (id),
    title         text        NOT NULL DEFAULT '',
    tagline       text        NOT NULL DEFAULT '',
    description   text        NOT NULL DEFAULT '',
    -- Media ids (content.media once the library lands); resolved to URLs on delivery.
    logo          text,
    social_image  text,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
INSERT INTO site_settings (id) VALUES (true);
