-- Condition (10) of Corollary 4 on the published tables, on the prior-normalised counts
-- count/F_c (F_c = 1: rho-safety; EST: one sub-label of the split): per (attribute, value) and
-- for the P_c, every class counted, > 0, and max/min <= ρ^(1/n)·(1 - 1e-9) in DOUBLE (stricter
-- than (10): rounding cannot pass an unsafe table); and Σ_t N^i_{t,c} = P_c (Statement 9a).
WITH per_value AS (
  SELECT a."attribute", a."value", COUNT(*) AS k, MIN(a."count") AS least,
         MIN(CAST(a."count" AS DOUBLE) / p."prior") AS lo, MAX(CAST(a."count" AS DOUBLE) / p."prior") AS hi
  FROM $attr_tbl AS a
  JOIN $class_tbl AS p ON a."class" = p."class"
  GROUP BY a."attribute", a."value"
), per_class AS (
  SELECT COUNT(*) AS k, MIN(p."count") AS least, MIN(p."prior") AS least_prior,
         MIN(CAST(p."count" AS DOUBLE) / p."prior") AS lo, MAX(CAST(p."count" AS DOUBLE) / p."prior") AS hi
  FROM $class_tbl AS p
), sums AS (
  SELECT a."attribute", a."class", SUM(a."count") AS s
  FROM $attr_tbl AS a
  GROUP BY a."attribute", a."class"
), bound AS (
  SELECT POWER(CAST($rho AS DOUBLE), 1.0 / $n) * (1 - 1e-9) AS b
)
SELECT
  (SELECT COUNT(*) FROM per_value, per_class, bound
   WHERE per_value.k <> per_class.k OR per_value.least <= 0 OR per_value.hi / per_value.lo > bound.b) AS bad_values,
  (SELECT COUNT(*) FROM per_class, bound
   WHERE per_class.least <= 0 OR per_class.least_prior <= 0 OR per_class.hi / per_class.lo > bound.b) AS bad_classes,
  (SELECT COUNT(*) FROM sums LEFT JOIN $class_tbl AS p ON sums."class" = p."class"
   WHERE p."count" IS NULL OR sums.s <> p."count") AS bad_sums,
  (SELECT COUNT(DISTINCT a."attribute") FROM $attr_tbl AS a) AS attributes,
  (SELECT k FROM per_class) AS classes
