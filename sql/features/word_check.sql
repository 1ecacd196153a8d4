-- Per word of 62 feature columns: the rows with a cell that is not 0 or 1, NULL included
-- ($word: sql/features/binary_cell.sql of each column of the word, joined by AND). Features
-- must be binary; only a word with any is examined column by column (features/column_check.sql).
SELECT SUM(CASE WHEN $word THEN 0 ELSE 1 END) AS bad
FROM $tbl
