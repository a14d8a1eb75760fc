-- The assistant's proposals (issue 28): a change a tool proposed, kept until
-- the person applies or dismisses it (docs/content.md, "Assistant tools and
-- proposals"). The conversation id is plain text with no foreign key, so this
-- table does not depend on the conversations' migration. No secret is ever
-- stored here: a key or webhook secret made by applying is shown once and
-- not kept.
CREATE TABLE assistant_proposals (
    id              text        PRIMARY KEY,
    conversation_id text        NOT NULL,
    user_id         text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tool            text        NOT NULL,
    target_kind     text        NOT NULL,
    target_id       text,
    arguments       jsonb       NOT NULL,
    -- [{field, before, after}] computed when the proposal was made.
    diff            jsonb       NOT NULL,
    -- Permissions applying needs (the tool's, plus content.publish to go live...).
    needs           text[]      NOT NULL,
    recoverable     boolean     NOT NULL DEFAULT true,
    -- A digest of the target as its admin route showed it, and its updatedAt.
    target_version  text,
    target_updated  text,
    -- pending, applying (only while an apply runs), applied, dismissed, refused.
    status          text        NOT NULL DEFAULT 'pending',
    refusal         text,
    -- What applying made (an entry's id...), never a secret.
    result_id       text,
    created_at      timestamptz NOT NULL,
    decided_at      timestamptz
);

CREATE INDEX assistant_proposals_user ON assistant_proposals (user_id, created_at DESC);
CREATE INDEX assistant_proposals_conversation
    ON assistant_proposals (conversation_id, created_at DESC);
