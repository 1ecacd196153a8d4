-- Adult as preprocessed by Kameya & Hayashi (2016), Sec. 4: the 8 quasi-identifiers
-- age, workclass, education, marital_status, occupation, race, sex, native_country and
-- the class income. Age is binned into [15,20), [20,25), ..., [75,80) and the merged
-- [80,95) ("each range includes more than 100 tuples"); rows with a missing value go.
-- `id` (the row's number in adult.data) is kept so original and anonymized rows align.
CREATE TABLE $out AS
SELECT
  id,
  CASE
    WHEN age >= 80 THEN '[80,95)'
    ELSE '[' || CAST(CAST(FLOOR(age / 5.0) * 5 AS INTEGER) AS VARCHAR) || ','
             || CAST(CAST(FLOOR(age / 5.0) * 5 + 5 AS INTEGER) AS VARCHAR) || ')'
  END AS age,
  workclass, education, marital_status, occupation, race, sex, native_country, income
FROM $src
WHERE age IS NOT NULL AND workclass IS NOT NULL AND education IS NOT NULL
  AND marital_status IS NOT NULL AND occupation IS NOT NULL AND race IS NOT NULL
  AND sex IS NOT NULL AND native_country IS NOT NULL AND income IS NOT NULL
