-- The month of a date or timestamp x (a fragment, hierarchy level `month`): '2016-05';
-- NULL (⊥) stays NULL. A timestamp with a time zone is cut in the session's time zone.
SELECT CAST(CAST(EXTRACT(YEAR FROM $col) AS INTEGER) AS VARCHAR) || '-'
       || LPAD(CAST(CAST(EXTRACT(MONTH FROM $col) AS INTEGER) AS VARCHAR), 2, '0')
