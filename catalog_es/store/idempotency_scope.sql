-- Idempotency records per caller (issue 13): a key replays only for the principal and project that stored
-- it, and stored bodies may be sealed (AES-GCM under the secrets key). Records kept so far were neither
-- scoped nor sealed (a stored body could hold a shared S3 secret): they are dropped; they expire within
-- the key lifetime anyway, and a retry then runs as a request of its own.
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys
    ADD COLUMN principal text NOT NULL,
    ADD COLUMN project text NOT NULL,
    ADD COLUMN sealed boolean NOT NULL DEFAULT false;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (key, principal, project, fingerprint);
