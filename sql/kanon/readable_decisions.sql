-- The decisions as a relation a reviewer reads: each group (y, c) whose pattern changes, by
-- its ORIGINAL values y and class c (typed like the table), and one flag per quasi-identifier
-- A_j: true = the cell becomes ⊥ (NULL).
CREATE TEMPORARY TABLE $decisions AS
SELECT $qi, $cls, $flag
FROM $src
WHERE FALSE
