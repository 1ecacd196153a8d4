-- 1 when $col equals $value, else 0 (NULL cells give 0). A set of values sums these terms.
-- Zhang et al. Sec. 5.1: e.g. marital status never-married (1) versus others (0).
SELECT CASE WHEN $col = $value THEN 1 ELSE 0 END
