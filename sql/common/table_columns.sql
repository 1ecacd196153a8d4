-- The columns of one table, in order, matched case-insensitively so that a name the user
-- typed resolves to the table as the catalog spells it. No schema given: the current one.
SELECT table_schema, table_name, column_name, data_type
FROM information_schema.columns
WHERE table_catalog = current_database()
  AND lower(table_name) = lower($table_name)
  AND lower(table_schema) = lower(COALESCE($schema_name, current_schema()))
ORDER BY table_schema, table_name, ordinal_position
