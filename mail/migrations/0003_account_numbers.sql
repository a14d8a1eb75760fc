-- A numeric id per account for integrations that need integers: the OAuth
-- server's user ids (its tables keep user_id bigint). Accounts stay keyed by uuid.
ALTER TABLE accounts ADD COLUMN number bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE accounts ADD CONSTRAINT accounts_number_key UNIQUE (number);
