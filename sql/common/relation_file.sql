-- PostgreSQL: the file node of a table's heap (pg_class.relfilenode). VACUUM FULL writes the
-- table into a new file and drops the old one, so a changed number proves it rewrote the table
-- (without the table's ownership it skips it with a warning only, no error).
SELECT pg_relation_filenode(CAST($relation AS REGCLASS)) AS filenode
