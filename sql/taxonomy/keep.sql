-- The stored taxonomies but one, copied into a new store (engines without DELETE: Spark writes
-- a new store and renames it over the old one once read back).
INSERT INTO $out
SELECT taxonomy, position, value, parent FROM $tbl WHERE taxonomy <> $taxonomy
