-- A table document's history lists (`snapshots`, `snapshot-log`, `metadata-log`) as one row per element, in
-- order: a commit inserts the elements it appended and deletes the ones it removed instead of rewriting the whole
-- document in `tables.metadata`, which keeps the rest of it (each present list as `[]`). Rows are keyed by the
-- table's id and `dropped`: a soft-dropped table's (its row in `deleted_tabulars`) are apart from those of a live
-- table that took its id (registered onto its metadata). `tabular_document` reassembles.
-- `entry` is the element's JSON as PostgreSQL prints its jsonb (`jsonb::text`): the document is served as text spliced
-- from the head's and these, the same bytes as printing the whole document's jsonb, without a jsonb per element.
CREATE TABLE IF NOT EXISTS table_document_entries (
    table_id uuid NOT NULL,
    dropped boolean NOT NULL DEFAULT false,
    list text NOT NULL,
    ordinal bigint NOT NULL,
    entry text NOT NULL,
    PRIMARY KEY (table_id, dropped, list, ordinal)
);

-- The whole document, as `jsonb::text` would print it, of a table (or view: it has no rows) whose `metadata` column
-- holds `head`, live or (`dropped`) soft-dropped: each top-level member in jsonb's order, a history list's elements
-- taken from the rows. A string body: `table_document_entries` is the search path's (live, a rebuild's shadow or an
-- as-of scratch schema).
CREATE OR REPLACE FUNCTION tabular_document_text(head jsonb, tabular_id uuid, dropped boolean DEFAULT false)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{' || coalesce(string_agg(
        to_json(m.key)::text || ': ' || CASE
            WHEN m.key IN ('snapshots', 'snapshot-log', 'metadata-log') AND jsonb_typeof(m.value) = 'array' THEN
                '[' || coalesce((
                    SELECT string_agg(e.entry, ', ' ORDER BY e.ordinal) FROM table_document_entries e
                    WHERE e.table_id = tabular_id AND e.dropped = tabular_document_text.dropped AND e.list = m.key
                ), '') || ']'
            ELSE m.value::text
        END,
        ', ' ORDER BY m.n), '') || '}'
    FROM jsonb_each(head) WITH ORDINALITY AS m(key, value, n)
$$;

-- The same as `json` (validated, not rebuilt as a jsonb), for readers that decode it.
CREATE OR REPLACE FUNCTION tabular_document(head jsonb, tabular_id uuid, dropped boolean DEFAULT false)
RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT tabular_document_text(head, tabular_id, dropped)::json
$$;

-- A database written before: move the lists of every table's document, live or soft-dropped, into rows.
INSERT INTO table_document_entries (table_id, dropped, list, ordinal, entry)
SELECT t.id, t.dropped, l.list, e.ordinal - 1, e.entry::text
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
