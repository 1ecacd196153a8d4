-- Per text column v that --types makes a `date`: the values holding a time of day, which a cast
-- to DATE would silently drop (a timestamp, with or without a zone, whose time is not midnight).
-- Any such value refuses the load, unless the user asked for it with `date:truncate`.
SELECT
  COUNT(*) FILTER (WHERE TRY_CAST($v AS TIMESTAMP) <> CAST(TRY_CAST($v AS DATE) AS TIMESTAMP)) AS n_timed
FROM $tbl
