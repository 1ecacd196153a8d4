-- The quarter of a date or timestamp x (a fragment, hierarchy level `quarter`): '2016-Q2';
-- NULL (⊥) stays NULL.
SELECT CAST(CAST(EXTRACT(YEAR FROM $col) AS INTEGER) AS VARCHAR) || '-Q'
       || CAST(CAST(EXTRACT(QUARTER FROM $col) AS INTEGER) AS VARCHAR)
