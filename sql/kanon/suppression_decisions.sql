-- The decisions of the algorithm as a relation: for each group (y, c) whose pattern changes,
-- its group key and one flag s_j per quasi-identifier: true = the cell A_j becomes ⊥ (NULL).
CREATE TEMPORARY TABLE $decisions (group_key VARCHAR, $flag BOOLEAN)
