-- The decisions of the algorithm as a relation: for each group (y, c) whose pattern changes,
-- its group key and one flag per quasi-identifier A_j: true = the cell becomes ⊥ (NULL).
CREATE TEMPORARY TABLE $decisions (group_key VARCHAR, $flag BOOLEAN)
