-- The rows of the listed equivalence classes: each row's key and the group key of its class
-- ($g: sql/common/group_key.sql over the row's quasi-identifiers, one hashable equality).
SELECT t.$key, c.g
FROM $tbl AS t
JOIN $classes AS c ON $g = c.g
