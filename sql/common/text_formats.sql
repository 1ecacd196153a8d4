-- The formats of direct identifiers in one text column A, over its distinct values (each
-- pattern is tried once per value, weighted by the rows holding it, not once per row): the
-- non-NULL rows and how many read as an e-mail address, a UUID, a phone number (digits in
-- groups, optionally after + or 00, neither a date nor one plain number), a long digit string
-- (an account or record number), or a whole number in scientific notation (a numeric id
-- printed by a spreadsheet, 2.98725e+13). The patterns are parameters; a value is matched as
-- text (a UUID-typed column too).
SELECT COALESCE(SUM(g.n), 0) AS n_values,
       COALESCE(SUM(CASE WHEN REGEXP_MATCHES(g.v, $email) THEN g.n ELSE 0 END), 0) AS n_email,
       COALESCE(SUM(CASE WHEN REGEXP_MATCHES(g.v, $uuid) THEN g.n ELSE 0 END), 0) AS n_uuid,
       COALESCE(SUM(CASE WHEN REGEXP_MATCHES(g.v, $phone) AND NOT REGEXP_MATCHES(g.v, $date)
                              AND NOT REGEXP_MATCHES(g.v, $digits) THEN g.n ELSE 0 END), 0) AS n_phone,
       COALESCE(SUM(CASE WHEN REGEXP_MATCHES(g.v, $long_digits) THEN g.n ELSE 0 END), 0) AS n_long_digits,
       COALESCE(SUM(CASE WHEN REGEXP_MATCHES(g.v, $scientific) THEN g.n ELSE 0 END), 0) AS n_scientific
FROM (SELECT CAST($col AS VARCHAR) AS v, COUNT(*) AS n FROM $tbl WHERE $col IS NOT NULL GROUP BY $col) AS g
