-- Who holds a running task and until when, and how far it got: operational state, never events.
-- A lease that ran out (a crashed worker) lets another worker claim the task; the progress stays for it.
CREATE TABLE IF NOT EXISTS task_leases (
    task_id uuid PRIMARY KEY,
    worker text NOT NULL,
    attempt integer NOT NULL,
    lease_until timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    progress jsonb
);
