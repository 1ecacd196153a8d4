-- Local recoding's write-back (issue 33) as ONE CREATE TABLE AS SELECT over the suppressed table:
-- each row t joined to the decision x of its tuple (its labels at the global node's level and its
-- class, $match, NULL-safe); $item lists the published columns in order, a quasi-identifier
-- through kanon/local_cell.sql, the hidden copies left out.
CREATE TABLE $out AS
SELECT $item
FROM $tbl AS t LEFT JOIN $decisions AS x ON $match
