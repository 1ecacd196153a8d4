-- Local recoding (issue 33): the ladder of one quasi-identifier above the global node's level L,
-- read from the SOURCE: each distinct label at L beside its labels at L + 1, L + 2, ... up to the
-- level below ⊥ ($label, as text). The hierarchies nest, so a label at L has one ancestor per level.
SELECT DISTINCT $label
FROM $src
WHERE $col IS NOT NULL
