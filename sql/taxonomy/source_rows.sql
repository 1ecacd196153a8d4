-- A user's (value, parent) table as text, the form a taxonomy is built from.
SELECT CAST($value AS VARCHAR) AS value, CAST($parent AS VARCHAR) AS parent FROM $src
