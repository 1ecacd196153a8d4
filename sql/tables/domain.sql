-- The domain of one dimension d_j: its distinct values (NULL is a value of its own) and their
-- text labels, the form the published table shows them in.
SELECT $dim AS v, CAST($dim AS VARCHAR) AS label
FROM $src
GROUP BY $dim
ORDER BY v NULLS LAST
