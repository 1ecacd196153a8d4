-- The decisions of the algorithm as a relation of integer codes: for each group (y, c) whose
-- pattern changes, the dictionary codes of its values y_1..y_m and class c (common/value_dictionary.sql,
-- -1 for ⊥), and one flag per quasi-identifier A_j: true = the cell becomes ⊥ (NULL).
CREATE TEMPORARY TABLE $decisions ($code BIGINT, $flag BOOLEAN)
