-- Metrics reports sent by engines (ScanReport, CommitReport …): not events, a bounded table.
CREATE TABLE IF NOT EXISTS table_metrics_reports (
    id bigserial PRIMARY KEY,
    warehouse_id uuid NOT NULL,
    table_id uuid NOT NULL,
    report_type text,
    report bytea NOT NULL,  -- the JSON as sent: any shape, any characters
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS table_metrics_reports_by_table ON table_metrics_reports (table_id, id);
