-- Row alignment of the original O and the anonymized A by the key: the rows of O that find
-- a row of A with the same key, and how many of those carry a different class label.
SELECT COUNT(*) AS matched,
       COUNT(CASE WHEN $o_cls IS DISTINCT FROM $a_cls THEN 1 END) AS class_changed
FROM $original AS o
JOIN $anonymized AS a ON $o_key = $a_key
