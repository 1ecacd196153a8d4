-- A text x by its first $keep characters (a fragment, hierarchy level `prefix`), the rest
-- masked by '*' to x's own length: '12345' -> '123**'; a value no longer than $keep stays
-- whole; NULL (⊥) stays NULL. $keep is a literal (CREATE TABLE AS takes no bind parameters).
SELECT CASE
  WHEN LENGTH($col) <= $keep THEN $col
  ELSE SUBSTRING($col, 1, $keep) || REPEAT('*', LENGTH($col) - $keep)
END
