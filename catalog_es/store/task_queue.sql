-- The task queue's read model, projected inline from the task events (rebuilt and verified like the catalog's).
CREATE TABLE IF NOT EXISTS tasks (
    task_id uuid PRIMARY KEY,
    queue text NOT NULL,
    warehouse_id uuid NOT NULL,
    entity_type text NOT NULL,
    entity_id uuid NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL,  -- scheduled, running, success, failed, cancelled
    attempt integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL,
    due_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    scheduled_by text NOT NULL,
    last_error text,
    version bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_due ON tasks (queue, due_at) WHERE status IN ('scheduled', 'running');
CREATE INDEX IF NOT EXISTS tasks_by_warehouse ON tasks (warehouse_id, created_at, task_id);
CREATE INDEX IF NOT EXISTS tasks_by_entity ON tasks (entity_id);

CREATE TABLE IF NOT EXISTS task_attempts (
    task_id uuid NOT NULL,
    attempt integer NOT NULL,
    worker text NOT NULL,
    status text NOT NULL,  -- running, success, failed
    started_at timestamptz NOT NULL,
    ended_at timestamptz,
    message text,
    result jsonb,
    PRIMARY KEY (task_id, attempt)
);

CREATE TABLE IF NOT EXISTS task_queue_configs (
    warehouse_id uuid NOT NULL,
    queue text NOT NULL,
    config jsonb NOT NULL,
    max_seconds_since_last_heartbeat integer,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (warehouse_id, queue)
);
