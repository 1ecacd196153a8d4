-- The CSV file as anonsql reads it, a temporary table on a DuckDB connection (read once):
-- DuckDB's reader with the dialect fixed (no guessing: delimiter, RFC 4180 quotes, header row,
-- strict field counts), every field read as text; $item are the fields, trimmed and
-- NULL-marked (csv_field).
CREATE TEMPORARY TABLE $view AS
SELECT $item
FROM read_csv($path, auto_detect = false, header = true, delim = $delim, quote = '"', escape = '"',
              columns = $columns, encoding = $encoding, compression = $compression,
              strict_mode = true, null_padding = false)
