-- Idempotency-Key records (Iceberg REST 1.11): the final response of a mutating request, replayed on retry.
-- Keyed by key and request (method + path): a key reused for another operation is another record.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    key text NOT NULL,
    fingerprint text NOT NULL,
    state text NOT NULL CHECK (state IN ('in-progress', 'done')),
    status integer,
    content_type text,
    body bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (key, fingerprint)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created_at ON idempotency_keys (created_at);
