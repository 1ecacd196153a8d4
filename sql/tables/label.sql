-- A cell's label in dimension d (a fragment): 'Total' where the cell sums d, else d's text.
SELECT CASE WHEN GROUPING($dim) = 1 THEN 'Total' ELSE CAST($dim AS VARCHAR) END
