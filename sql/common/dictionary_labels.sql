-- A dictionary's texts in code order: the label of code 0, 1, ... (common/value_dictionary.sql).
SELECT label FROM $dict ORDER BY code
