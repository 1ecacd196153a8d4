-- PostgreSQL: condition (10) of Corollary 4 exactly, in NUMERIC, on the prior-normalised
-- counts count/F_c (F_c = 1: rho-safety; EST: one sub-label of the split): for every pair of
-- classes c, c' of a value (and of the P_c), with ρ = $rho_num/$rho_den,
-- (N_c·F_c')^n · rho_den <= rho_num · (N_c'·F_c)^n, eq. (10)'s ≤ with no margin; and
-- Σ_t N^i_{t,c} = P_c (Statement 9a).
WITH cls AS (
  SELECT p."class", CAST(p."count" AS DECIMAL(1000, 0)) AS cnt, CAST(p."prior" AS DECIMAL(1000, 0)) AS f
  FROM $class_tbl AS p
), vals AS (
  SELECT a."attribute", a."value", a."class", CAST(a."count" AS DECIMAL(1000, 0)) AS cnt, c.f
  FROM $attr_tbl AS a
  JOIN cls AS c ON a."class" = c."class"
), per_value AS (
  SELECT v."attribute", v."value", COUNT(*) AS k, MIN(v.cnt) AS least
  FROM vals AS v
  GROUP BY v."attribute", v."value"
), per_class AS (
  SELECT COUNT(*) AS k, MIN(c.cnt) AS least, MIN(c.f) AS least_prior
  FROM cls AS c
), bad_pairs AS (
  SELECT DISTINCT x."attribute", x."value"
  FROM vals AS x
  JOIN vals AS y ON x."attribute" = y."attribute" AND x."value" = y."value"
  WHERE y.cnt > 0 AND POWER(x.cnt * y.f, $n) * $rho_den > $rho_num * POWER(y.cnt * x.f, $n)
), bad_class_pairs AS (
  SELECT COUNT(*) AS k
  FROM cls AS x, cls AS y
  WHERE y.cnt > 0 AND POWER(x.cnt * y.f, $n) * $rho_den > $rho_num * POWER(y.cnt * x.f, $n)
), sums AS (
  SELECT a."attribute", a."class", SUM(CAST(a."count" AS DECIMAL(1000, 0))) AS s
  FROM $attr_tbl AS a
  GROUP BY a."attribute", a."class"
)
SELECT
  (SELECT COUNT(*) FROM per_value, per_class
   WHERE per_value.k <> per_class.k OR per_value.least <= 0
      OR EXISTS (SELECT 1 FROM bad_pairs AS b WHERE b."attribute" = per_value."attribute"
                 AND b."value" = per_value."value")) AS bad_values,
  (SELECT COUNT(*) FROM per_class, bad_class_pairs
   WHERE per_class.least <= 0 OR per_class.least_prior <= 0 OR bad_class_pairs.k > 0) AS bad_classes,
  0 AS undecided,
  (SELECT COUNT(*) FROM sums LEFT JOIN $class_tbl AS p ON sums."class" = p."class"
   WHERE p."count" IS NULL OR sums.s <> CAST(p."count" AS DECIMAL(1000, 0))) AS bad_sums,
  (SELECT COUNT(DISTINCT a."attribute") FROM $attr_tbl AS a) AS attributes,
  (SELECT k FROM per_class) AS classes
