-- NULL cells per column (⊥, suppressed or missing): one COUNT per column $col, in one scan.
SELECT COUNT(*) - COUNT($col) AS nulls FROM $tbl
