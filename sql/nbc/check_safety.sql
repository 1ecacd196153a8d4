-- DuckDB and Spark: condition (10) of Corollary 4 on the published tables, on the prior-normalised counts
-- count/F_c (F_c = 1: rho-safety; EST: one sub-label of the split), and Σ_t N^i_{t,c} = P_c
-- (Statement 9a) exactly in BIGNUM (Spark: DECIMAL(38, 0)). (10) for each pair of classes of a value (and of the P_c):
-- n·(ln N_c − ln F_c − ln N_c' + ln F_c') <= ln ρ. DuckDB multiplies big integers in DOUBLE
-- only, so the logs come from the count's decimal text (17 leading digits and the length): a
-- pair beyond the rounding bound $tol is bad; one within it is "undecided" and decided exactly
-- by the caller from the exact counts (never accepted by a margin).
WITH cls AS (
  SELECT p."class", p.cnt, p."prior" AS f,
         LN(CAST(LEFT(p.cnt, 17) AS DOUBLE)) + (LENGTH(p.cnt) - LEAST(LENGTH(p.cnt), 17)) * LN(10) - LN(p."prior") AS l
  FROM (SELECT "class", CAST("count" AS VARCHAR) AS cnt, "prior" FROM $class_tbl) AS p
), vals AS (
  SELECT a."attribute", a."value", a."class", a.cnt,
         LN(CAST(LEFT(a.cnt, 17) AS DOUBLE)) + (LENGTH(a.cnt) - LEAST(LENGTH(a.cnt), 17)) * LN(10) - LN(c.f) AS l
  FROM (SELECT "attribute", "value", "class", CAST("count" AS VARCHAR) AS cnt FROM $attr_tbl) AS a
  JOIN cls AS c ON a."class" = c."class"
), per_value AS (
  SELECT v."attribute", v."value", COUNT(*) AS k, MIN(CAST(v.cnt AS BIGNUM)) AS least, MAX(v.l) - MIN(v.l) AS spread
  FROM vals AS v
  GROUP BY v."attribute", v."value"
), per_class AS (
  SELECT COUNT(*) AS k, MIN(CAST(c.cnt AS BIGNUM)) AS least, MIN(c.f) AS least_prior, MAX(c.l) - MIN(c.l) AS spread
  FROM cls AS c
), sums AS (
  SELECT a."attribute", a."class", SUM(CAST(CAST(a."count" AS VARCHAR) AS BIGNUM)) AS s
  FROM $attr_tbl AS a
  GROUP BY a."attribute", a."class"
)
SELECT
  (SELECT COUNT(*) FROM per_value, per_class
   WHERE per_value.k <> per_class.k OR per_value.least <= 0 OR $n * per_value.spread - LN($rho) > $tol) AS bad_values,
  (SELECT COUNT(*) FROM per_class
   WHERE per_class.least <= 0 OR per_class.least_prior <= 0 OR $n * per_class.spread - LN($rho) > $tol) AS bad_classes,
  (SELECT COUNT(*) FROM per_value WHERE ABS($n * per_value.spread - LN($rho)) <= $tol)
  + (SELECT COUNT(*) FROM per_class WHERE ABS($n * per_class.spread - LN($rho)) <= $tol) AS undecided,
  (SELECT COUNT(*) FROM sums LEFT JOIN $class_tbl AS p ON sums."class" = p."class"
   WHERE p."count" IS NULL OR sums.s <> CAST(CAST(p."count" AS VARCHAR) AS BIGNUM)) AS bad_sums,
  (SELECT COUNT(DISTINCT a."attribute") FROM $attr_tbl AS a) AS attributes,
  (SELECT k FROM per_class) AS classes
