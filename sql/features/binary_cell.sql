-- A feature cell is 0 or 1 (false for any other value; NULL for NULL, which CASE treats as false).
SELECT $col IN (0, 1)
