-- Is a name a table or a view ('BASE TABLE' / 'VIEW'), so --replace drops the right kind.
SELECT table_type
FROM information_schema.tables
WHERE table_catalog = current_database()
  AND table_schema = $schema_name
  AND table_name = $table_name
