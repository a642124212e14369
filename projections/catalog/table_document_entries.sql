-- A table document's history lists (`snapshots`, `snapshot-log`, `metadata-log`) as one row per element, in
-- order: a commit inserts the elements it appended and deletes the ones it removed instead of rewriting the whole
-- document in `tables.metadata`, which keeps the rest of it (each present list as `[]`). Rows are keyed by the
-- table's id and `dropped`: a soft-dropped table's (its row in `deleted_tabulars`) are apart from those of a live
-- table that took its id (registered onto its metadata). `tabular_document` reassembles.
CREATE TABLE IF NOT EXISTS table_document_entries (
    table_id uuid NOT NULL,
    dropped boolean NOT NULL DEFAULT false,
    list text NOT NULL,
    ordinal bigint NOT NULL,
    entry jsonb NOT NULL,
    PRIMARY KEY (table_id, dropped, list, ordinal)
);

-- The whole document of a table (or view: it has no rows) whose `metadata` column holds `head`, live or (`dropped`)
-- soft-dropped. A string body: `table_document_entries` is the search path's (live, a rebuild's shadow or an as-of
-- scratch schema).
CREATE OR REPLACE FUNCTION tabular_document(head jsonb, tabular_id uuid, dropped boolean DEFAULT false) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT head || coalesce(
        (SELECT jsonb_object_agg(lists.list, lists.entries) FROM (
            SELECT e.list, jsonb_agg(e.entry ORDER BY e.ordinal) AS entries
            FROM table_document_entries e WHERE e.table_id = tabular_id AND e.dropped = tabular_document.dropped
            GROUP BY e.list
        ) lists),
        '{}'::jsonb)
$$;

-- A database written before: move the lists of every table's document, live or soft-dropped, into rows.
INSERT INTO table_document_entries (table_id, dropped, list, ordinal, entry)
SELECT t.id, t.dropped, l.list, e.ordinal - 1, e.entry
FROM (
    SELECT id, false AS dropped, metadata FROM tables
    UNION ALL SELECT id, true, metadata FROM deleted_tabulars WHERE kind = 'table'
) t
CROSS JOIN unnest(ARRAY['snapshots', 'snapshot-log', 'metadata-log']) AS l(list)
CROSS JOIN LATERAL jsonb_array_elements(
    CASE WHEN jsonb_typeof(t.metadata -> l.list) = 'array' THEN t.metadata -> l.list ELSE '[]'::jsonb END
) WITH ORDINALITY AS e(entry, ordinal)
ON CONFLICT DO NOTHING;

UPDATE tables SET metadata = metadata || coalesce((
    SELECT jsonb_object_agg(l.list, '[]'::jsonb) FROM unnest(ARRAY['snapshots', 'snapshot-log', 'metadata-log']) AS l(list)
    WHERE jsonb_typeof(metadata -> l.list) = 'array'
), '{}'::jsonb)
WHERE metadata ?| ARRAY['snapshots', 'snapshot-log', 'metadata-log'];

UPDATE deleted_tabulars SET metadata = metadata || coalesce((
    SELECT jsonb_object_agg(l.list, '[]'::jsonb) FROM unnest(ARRAY['snapshots', 'snapshot-log', 'metadata-log']) AS l(list)
    WHERE jsonb_typeof(metadata -> l.list) = 'array'
), '{}'::jsonb)
WHERE kind = 'table' AND metadata ?| ARRAY['snapshots', 'snapshot-log', 'metadata-log'];
