-- The non-empty cells of every grouping set (inner cells and margins): GROUPING(d_1..d_D)
-- marks the summed dimensions; n = rows, contributors = distinct contributors, total = the
-- cell's sum of the measure (a count when the measure is 1). Empty cells are the rest of the grid.
SELECT $dim, $gid AS gid, COUNT(*) AS n, COUNT(DISTINCT $who) AS contributors, SUM($measure) AS total
FROM $src
GROUP BY $sets
