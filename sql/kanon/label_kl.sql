-- The papers' MAR cost of a cell generalized to label L of QI j (a fragment, --search-utility mar;
-- Kameya & Hayashi's KL of eq. 7 with each label's class-conditional mass spread evenly over its
-- leaves, as protect's -g methods spread it): with q(x|c) = p(L|c) / |leaves under L|,
--   cost(x, L) = ln p(x|c) - ln q(x|c) = ln N(x, c) - ln N(L, c) + ln |leaves under L|,
-- so Σ over the rows / N = Σ_c p(c) KL(p(.|c), q(.|c)). $leaf is x (level 0), $label L, $cls the
-- class (anonsql_c of the base), $first 1 on one row per leaf; at ⊥ (L NULL) q is 1 / D_j over
-- the class's rows. A NULL source value loses nothing (it is ⊥ already); a kept value loses 0.
SELECT CASE
  WHEN $leaf IS NULL THEN 0.0
  ELSE LN(CAST(SUM(anonsql_n) OVER (PARTITION BY $leaf, $cls) AS DOUBLE))
       - LN(CAST(SUM(anonsql_n) OVER (PARTITION BY $label, $cls) AS DOUBLE))
       + LN(CAST(GREATEST(SUM($first) OVER (PARTITION BY $label), 1) AS DOUBLE))
END
