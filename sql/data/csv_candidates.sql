-- A cheap first scan of a read CSV's text columns v: N rows, and per column the non-NULL
-- values, those made only of characters a number, date or timestamp (Z: UTC) can hold (a column with
-- any other value is text: csv_kinds need not look at it), and the fields with a NUL byte.
SELECT
  COUNT(*) AS n_rows,
  COUNT($v) AS n_values,
  COUNT(*) FILTER (WHERE regexp_full_match($v, '[-+.0-9eE: TZ]+|[+-]?(?i:nan|inf|infinity)')) AS n_candidates,
  COUNT(*) FILTER (WHERE contains($v, chr(0))) AS n_nul
FROM $tbl
