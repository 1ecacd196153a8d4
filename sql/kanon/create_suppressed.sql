-- Write-back without UPDATE (Spark): ONE CREATE TABLE AS SELECT over the source joined to the
-- decisions (broadcast on Spark). $item lists the source's columns in order; a quasi-identifier
-- A_j is `CASE WHEN d.<flag of A_j> THEN NULL ELSE t.A_j END`, so a row of a changed group (y, c)
-- gets the group's final pattern u (Algorithm 2: u_j = ⊥ where the flag is true) and a row
-- without a decision (no match: flag NULL) keeps every value.
CREATE TABLE $out AS
SELECT $item
FROM $src AS t LEFT JOIN $decisions AS d ON $row_key = d.group_key
