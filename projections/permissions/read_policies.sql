-- Read policies (issue 33): per table and principal, the rows filter (the spec's JSON expression) and the columns.
CREATE TABLE authz_read_policies (
    table_id uuid NOT NULL,
    principal text NOT NULL,             -- user:<id> | role:<uuid>
    row_filter jsonb,                    -- NULL: every row
    columns text[],                      -- NULL: every column
    PRIMARY KEY (table_id, principal)
);
CREATE INDEX authz_read_policies_principal ON authz_read_policies (principal);  -- /config, loadTable: any policy here?
