-- The class of a run without --class: one label shared by every row (the paper's C = 1).
SELECT CAST('' AS VARCHAR)
