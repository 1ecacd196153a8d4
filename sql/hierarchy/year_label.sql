-- The year of a date or timestamp x (a fragment, hierarchy level `year`): '2016'; NULL (⊥) stays NULL.
SELECT CAST(CAST(EXTRACT(YEAR FROM $col) AS INTEGER) AS VARCHAR)
