-- The row id of a row t, the engine's pseudo-column $row_id (Engine.row_id: DuckDB's rowid, or
-- PostgreSQL's system column ctid, stable within the transaction that holds the table), to update
-- rows found by a join.
SELECT t.$row_id
