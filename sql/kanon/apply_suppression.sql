-- Set-based write-back: ONE update for the whole run. Every row of a group (y, c) gets the
-- group's final suppression pattern u (Algorithm 2: u_j = ⊥ where the flag of A_j is true);
-- rows find their group through the NULL-safe group key of sql/common/group_key.sql.
UPDATE $out AS t
SET $qi = CASE WHEN d.$flag THEN NULL ELSE t.$qi END
FROM $decisions AS d
WHERE $row_key = $decision_key
