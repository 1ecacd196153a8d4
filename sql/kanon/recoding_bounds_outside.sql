-- Global recoding's independent check of the bound columns (issue 33, --hierarchy-bounds), per
-- generalized quasi-identifier $col with its bounds $lo (closed) and $hi (open): the published
-- rows whose bounds are NULL where the value is not or the other way round, plus the SOURCE rows
-- whose label at the chosen level ($label, computed from the source table itself) is a published
-- value whose published range does not hold them: not lo <= x < hi (at level 0, where the value
-- is kept, lo = x = hi). Must be 0.
SELECT (SELECT COUNT(*) FROM $out
        WHERE ($col IS NULL) <> ($lo IS NULL) OR ($col IS NULL) <> ($hi IS NULL))
     + (SELECT COUNT(*)
        FROM (SELECT DISTINCT $col AS anonsql_label, $lo AS anonsql_lo, $hi AS anonsql_hi
              FROM $out WHERE $col IS NOT NULL) AS o
        JOIN $src AS s ON $label = o.anonsql_label
        WHERE NOT (o.anonsql_lo <= $x AND ($x < o.anonsql_hi OR (o.anonsql_lo = o.anonsql_hi AND $x = o.anonsql_hi))))
       AS outside
