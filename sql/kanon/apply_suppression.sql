-- In-place write-back: ONE update for the whole run. The changed rows c are found as in
-- kanon/create_suppressed.sql (each row joined by $match to the decisions x of its group (y, c):
-- by dictionary codes, LEFT JOINs added by anonsql.kanon.rewrite ahead of the decisions join,
-- or on PostgreSQL by value); each gets its group's final pattern u (Algorithm 2: u_j = ⊥ where
-- the flag of A_j is true), addressed by the engine's row id $row_id.
UPDATE $out AS t
SET $qi = CASE WHEN c.$flag THEN NULL ELSE t.$qi END
FROM (SELECT $row_id AS r, x.$flag FROM $out AS t JOIN $decisions AS x ON $match) AS c
WHERE $row_id = c.r
