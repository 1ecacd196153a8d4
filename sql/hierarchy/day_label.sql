-- The day of a date or timestamp x (a fragment, hierarchy level `day`): its ISO date
-- '2016-05-10', the time of day dropped; NULL (⊥) stays NULL.
SELECT CAST(CAST($col AS DATE) AS VARCHAR)
