-- PostgreSQL only: the published counts as exact NUMERIC (up to 1000 digits) instead of text.
ALTER TABLE $out ALTER COLUMN "count" TYPE DECIMAL(1000, 0) USING CAST("count" AS DECIMAL(1000, 0))
