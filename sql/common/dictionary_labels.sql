-- The texts of one dictionary (common/value_dictionary.sql), each with its code and the
-- dictionary's position $j among the run's dictionaries. anonsql.stats joins one of these per
-- dictionary into ONE UNION ALL, so every label of every column comes back in one query.
SELECT $j AS j, code, label FROM $dict
