-- One ⊥ pattern $s of the published table (a branch of attack/linkage.sql): the attacker classes a
-- whose values equal those of a published class of this pattern on every quasi-identifier the
-- pattern publishes ($same: a.y_j = p.y_j for each such j; its ⊥ positions match any value), with
-- that class's size c and key k. An equi-join, so each attacker class is probed once per pattern.
SELECT a.$a_id, p.$c, p.$k
FROM att AS a
JOIN pub AS p ON p.$s = $pattern AND $same
