-- f(t): the stratified, seeded cross-validation fold of every row t of the ORIGINAL table.
-- Within each class c the rows are ranked by md5(key || '|' || seed) (md5 gives the same
-- hex text on every engine) and the r-th row (r = 1, 2, ...) goes to fold (r - 1) mod F,
-- written as (r - 1) - F * ((r - 1) // F) because SQL files hold no percent sign (psycopg).
SELECT k, CAST(r - 1 - $n_folds * ((r - 1) // $n_folds) AS INTEGER) AS fold
FROM (
  SELECT $key AS k,
         ROW_NUMBER() OVER (
           PARTITION BY $label
           ORDER BY md5(CAST($key AS VARCHAR) || '|' || CAST($seed AS VARCHAR))
         ) AS r
  FROM $original
) AS ranked
