-- Re-identification risk against the population, from the sample classes E_k of $classes (sample
-- count f_k, population count F_k; risk/population_counts.sql or risk/weighted_counts.sql), n = Σ f_k.
-- F_k < f_k cannot happen with a true population; such a class is taken as F_k = f_k and counted.
--   journalist risk   max_k 1/F_k: the attacker knows the person is in the population, not whether
--                     in the sample (El Emam & Dankar 2008)
--   records above     Σ f_k over the classes with 1/F_k > $threshold
--   marketer risk     (1/n) Σ_k f_k / F_k: the expected share of records re-identified when every
--                     record is linked to the population
--   individual risk   r_k of Benedetti & Franconi (1998), sdcMicro's indivRisk (method "approx"),
--                     with p_k = f_k / F_k:
--                       F_k = f_k: 1/f_k;  f_k = 1: p/(1-p) · ln(1/p);
--                       f_k = 2: p/(1-p) - (p/(1-p))² · ln(1/p);  f_k > 2: p / (f_k - (1-p))
--                     max_k r_k, and Σ_k f_k · r_k, the expected number of re-identified records
SELECT
  MAX(1.0 / big_f) AS journalist,
  COALESCE(SUM(f) FILTER (WHERE 1.0 / big_f > $threshold), 0) AS records_above,
  SUM(f / big_f) / SUM(f) AS marketer,
  MAX(r) AS max_individual,
  SUM(f * r) AS expected_reidentified,
  SUM(f) AS n,
  COUNT(*) FILTER (WHERE short) AS short_classes
FROM (
  SELECT
    f, big_f, short,
    CASE
      WHEN big_f <= f THEN 1.0 / f
      WHEN f = 1 THEN p / (1 - p) * LN(1 / p)
      WHEN f = 2 THEN p / (1 - p) - POWER(p / (1 - p), 2) * LN(1 / p)
      ELSE p / (f - (1 - p))
    END AS r
  FROM (
    SELECT f, big_f, short, f / big_f AS p
    FROM (
      SELECT CAST(f AS DOUBLE) AS f, CAST(GREATEST(big_f, f) AS DOUBLE) AS big_f, big_f < f AS short
      FROM $classes
    ) AS counted
  ) AS shares
) AS e
