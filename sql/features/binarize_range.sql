-- 1 when $lower < $col <= $upper (a bound bound to NULL is open), else 0; NULL cells give 0.
-- Zhang et al. Sec. 5.1 cut numeric attributes into intervals, one binary attribute each.
SELECT CASE WHEN ($lower IS NULL OR $col > $lower) AND ($upper IS NULL OR $col <= $upper) THEN 1 ELSE 0 END
