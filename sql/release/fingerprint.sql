-- Fingerprint of a table: N (its rows) and an order-independent hash of its rows, the MD5 of
-- the sorted MD5s of each row's NULL-safe group key ($key: sql/common/group_key.sql over all
-- columns). Equal fingerprints <=> (up to MD5 collisions) the same multiset of rows.
SELECT COUNT(*) AS n, MD5(STRING_AGG(h, ',' ORDER BY h)) AS digest
FROM (SELECT MD5($key) AS h FROM $tbl) AS r
