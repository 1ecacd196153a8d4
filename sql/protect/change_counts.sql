-- Cells turned NULL per (column, original value), from the changes table: the joint
-- (v, ν) counts of the conditional entropy of Def. 2.11.
SELECT column_name, old_value, COUNT(*) AS n FROM $changes GROUP BY column_name, old_value
