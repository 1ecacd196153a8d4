-- The shape of one trimmed CSV field v (a fragment): 'integer' (fits BIGINT, no leading
-- zero), 'long' (a whole number that must stay text: a leading zero as in ZIP 01548, or too
-- long as a 20-digit code), 'float', 'date' / 'timestamp' (ISO), 'timestamptz' (an ISO
-- timestamp ending in a time zone: Z or an offset such as +00:00, +0200, -05), else 'text'.
SELECT CASE
  WHEN $v IS NULL THEN NULL
  WHEN regexp_full_match($v, '[+-]?[0-9]+') THEN
    CASE WHEN regexp_matches($v, '^[+-]?0[0-9]') OR TRY_CAST($v AS BIGINT) IS NULL THEN 'long' ELSE 'integer' END
  WHEN regexp_matches($v, '^[+-]?0[0-9]') THEN 'text'
  WHEN regexp_full_match($v, '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?')
       OR lower($v) IN ('nan', 'inf', '+inf', '-inf', 'infinity', '+infinity', '-infinity') THEN 'float'
  WHEN regexp_full_match($v, '[0-9]{4}-[0-9]{2}-[0-9]{2}') AND TRY_CAST($v AS DATE) IS NOT NULL THEN 'date'
  WHEN regexp_full_match($v, '[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?')
       AND TRY_CAST($v AS TIMESTAMP) IS NOT NULL THEN 'timestamp'
  WHEN regexp_full_match($v, '[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)? ?(Z|[+-][0-9]{2}(:?[0-9]{2})?)')
       AND TRY_CAST($v AS TIMESTAMPTZ) IS NOT NULL THEN 'timestamptz'
  ELSE 'text'
END
