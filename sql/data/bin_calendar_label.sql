-- Calendar bin of a date or timestamp x (a fragment): the period holding x (a week from Monday,
-- a month, a quarter, a year), labelled '[first,next)' by the ISO date of its first day and of
-- the next period's first day, so labels sort as text in time order; NULL stays NULL. $unit is
-- the period's name and $step its length as an interval, both literals (CREATE TABLE AS takes
-- no bind parameters). A timestamp with a time zone is cut in the session's time zone.
SELECT CASE
  WHEN $col IS NULL THEN NULL
  ELSE '[' || CAST(CAST(DATE_TRUNC($unit, $col) AS DATE) AS VARCHAR) || ','
           || CAST(CAST(DATE_TRUNC($unit, $col) + $step AS DATE) AS VARCHAR) || ')'
END
