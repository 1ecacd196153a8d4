-- The NULL cells of each column, in one scan: a kanon output's suppressed quasi-identifiers
-- hold NULLs (⊥), so without --qi protect watches the columns that hold some.
SELECT COUNT(*) - COUNT($col) AS nulls
FROM $tbl
