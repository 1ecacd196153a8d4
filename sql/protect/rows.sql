-- The microdata of a protect run: the key and the columns the classifiers use. The caller
-- sorts by key in Python, so that the thesis's "next tuple" is the same on every engine
-- (text collations differ between DuckDB and PostgreSQL).
SELECT $key, $col FROM $tbl
