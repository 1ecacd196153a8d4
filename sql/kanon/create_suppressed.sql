-- Write-back as ONE CREATE TABLE AS SELECT over the source. Each row t is coded by the value
-- dictionaries (one LEFT JOIN per column ahead of this join, added by anonsql.kanon.rewrite:
-- typed equality, the equality GROUP BY counted with; -1 for ⊥, -2 for a value written after
-- the statistics) and joined by those integer codes ($match) to the decisions x of its group
-- (y, c). $item lists the source's columns in order; a quasi-identifier A_j is
-- `CASE WHEN x.<flag of A_j> THEN NULL ELSE t.A_j END`, so a row of a changed group gets the
-- group's final pattern u (Algorithm 2: u_j = ⊥ where the flag is true) and a row without a
-- decision (no match: flag NULL) keeps every value.
CREATE TABLE $out AS
SELECT $item
FROM $src AS t LEFT JOIN $decisions AS x ON $match
