-- One level of a quasi-identifier's ladder in local recoding's label check (issue 33): the SOURCE
-- rows' label at that level ($label, as text) and class, with the rows under each.
SELECT $label AS v, $cls AS c, COUNT(*) AS n
FROM $src
GROUP BY 1, 2
