-- Failed client authentications are throttled per (client, source address):
-- a stranger's failures no longer lock the real client out (issue 11, item 7).
-- The client row keeps auth_failures/auth_failures_since as the client-wide
-- count of the window, which only tightens the per-address rule; its own lock
-- is gone.
CREATE TABLE oauth_client_auth_failures (
    client_id text NOT NULL,
    address text NOT NULL,                        -- IPv4 address, or the IPv6 /64
    failures integer NOT NULL,
    failures_since timestamptz NOT NULL,
    locked_until timestamptz,
    PRIMARY KEY (client_id, address)
);
CREATE INDEX oauth_client_auth_failures_since_idx ON oauth_client_auth_failures (failures_since);

ALTER TABLE oauth_clients DROP COLUMN auth_locked_until;
