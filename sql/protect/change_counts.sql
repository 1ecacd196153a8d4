-- Cells changed per (column, original value v, new value L), from the changes table: the joint
-- counts of the conditional entropy of Def. 2.11 (L NULL: turned ν).
SELECT column_name, old_value, new_value, COUNT(*) AS n FROM $changes
GROUP BY column_name, old_value, new_value
