-- The event log: append-only CloudEvents with a gap-free, commit-ordered global position.
CREATE TABLE IF NOT EXISTS catalog_events (
    global_position bigint PRIMARY KEY,
    id uuid NOT NULL UNIQUE,
    source text NOT NULL,
    type text NOT NULL,
    subject text,
    time timestamptz NOT NULL,
    datacontenttype text NOT NULL DEFAULT 'application/json',
    data jsonb NOT NULL,
    extensions jsonb NOT NULL DEFAULT '{}'::jsonb,
    stream_id text NOT NULL,
    stream_version integer NOT NULL CHECK (stream_version >= 1),
    commit_id uuid NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (stream_id, stream_version)
);
CREATE INDEX IF NOT EXISTS catalog_events_type_position ON catalog_events (type, global_position);

-- One row holding the last assigned position. Writers lock it for the whole transaction, so
-- positions follow commit order and a rolled-back transaction gives its numbers back.
CREATE TABLE IF NOT EXISTS catalog_event_counter (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    position bigint NOT NULL
);
INSERT INTO catalog_event_counter (position) VALUES (0) ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION catalog_events_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'catalog_events is append-only: % rejected', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
DROP TRIGGER IF EXISTS catalog_events_append_only ON catalog_events;
CREATE TRIGGER catalog_events_append_only BEFORE UPDATE OR DELETE ON catalog_events
    FOR EACH ROW EXECUTE FUNCTION catalog_events_reject_change();
DROP TRIGGER IF EXISTS catalog_events_no_truncate ON catalog_events;
CREATE TRIGGER catalog_events_no_truncate BEFORE TRUNCATE ON catalog_events
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_events_reject_change();
