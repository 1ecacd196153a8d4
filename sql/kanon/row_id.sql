-- The row id of a row t of a DuckDB table (the pseudo-column rowid), to update rows found by a join.
SELECT t.rowid
