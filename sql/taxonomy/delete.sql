-- Drop one stored taxonomy (before it is replaced).
DELETE FROM $tbl WHERE taxonomy = $taxonomy
