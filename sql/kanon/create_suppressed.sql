-- Write-back as ONE CREATE TABLE AS SELECT over the source. Each row t is joined ($match) to the
-- decisions x of its group (y, c) by typed SQL equality, through the value dictionaries: by the
-- dictionary codes of its values (one LEFT JOIN per column ahead of this join, added by
-- anonsql.kanon.rewrite: -1 for ⊥, -2 for a value written after the statistics), or on
-- PostgreSQL by its values themselves, the decisions' codes turned into values on their side
-- (kanon/decision_values.sql), save in a column where a decision names ⊥. $item lists the
-- source's columns in order; a quasi-identifier A_j is `CASE WHEN x.<flag of A_j> THEN NULL
-- ELSE t.A_j END`, so a row of a changed group gets the group's final pattern u (Algorithm 2:
-- u_j = ⊥ where the flag is true) and a row without a decision (no match: flag NULL) keeps
-- every value.
CREATE TABLE $out AS
SELECT $item
FROM $src AS t LEFT JOIN $decisions AS x ON $match
