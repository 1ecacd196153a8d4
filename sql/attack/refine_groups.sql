-- The refinement attack's groups g of a published row-level table: its rows grouped by their
-- published values on the columns the attack reads ($col: the tables' dimensions, and with the
-- kanon rule the quasi-identifiers y and the class c), ⊥ (NULL) a value of its own, with n_g.
-- Values as text, as the safe tables label them (tables/label.sql), so a cell and a label compare.
SELECT CAST($col AS VARCHAR) AS v, COUNT(*) AS n_g
FROM $tbl
GROUP BY $col
