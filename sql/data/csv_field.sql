-- One CSV field v (a fragment): blanks (space, tab, CR, LF) trimmed; NULL when empty or one
-- of the NA markers $na.
SELECT CASE
  WHEN list_contains($na, trim($col, ' ' || chr(9) || chr(13) || chr(10))) THEN NULL
  ELSE NULLIF(trim($col, ' ' || chr(9) || chr(13) || chr(10)), '')
END
