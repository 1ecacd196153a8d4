-- Remove a direct identifier from the published table (--drop).
ALTER TABLE $tbl DROP COLUMN $col
