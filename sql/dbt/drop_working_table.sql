-- Drop a working table of a dbt Python model's job (its private input, the job's output and the
-- private audit beside it) if it is there: before the job, and after it whatever happened.
DROP TABLE IF EXISTS $tbl
