-- What the candidate columns of a read CSV hold (those csv_candidates could not rule out):
-- per column the values whose shape (csv_shape) is integer, a number (integer or float), an
-- ISO date, an ISO timestamp and an ISO timestamp with a time zone.
SELECT
  COUNT(*) FILTER (WHERE $k = 'integer') AS n_integer,
  COUNT(*) FILTER (WHERE $k IN ('integer', 'float')) AS n_float,
  COUNT(*) FILTER (WHERE $k = 'date') AS n_date,
  COUNT(*) FILTER (WHERE $k = 'timestamp') AS n_timestamp,
  COUNT(*) FILTER (WHERE $k = 'timestamptz') AS n_timestamptz
FROM (SELECT $shape AS k FROM $tbl) AS shapes
