-- The row id of a row t of a PostgreSQL table (the system column ctid; stable within the
-- transaction that holds the table), to update rows found by a join.
SELECT t.ctid
