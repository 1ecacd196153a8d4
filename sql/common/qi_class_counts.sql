-- N(y, c) coded: the tuple set S of common/qi_class_groups.sql with each value y_j and the class
-- c replaced by its dictionary code (common/value_dictionary.sql; -1 for ⊥). The dictionaries
-- are joined (one LEFT JOIN per column, added by anonsql.stats.dictionary_codes) to the small
-- grouped relation, never to the rows. Read by position: codes y_1..y_m, class code, N(y, c).
SELECT $code, g.n
FROM $groups AS g
