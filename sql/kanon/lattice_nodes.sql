-- A batch of lattice nodes evaluated in ONE scan of the base relation (issue 33; the check of
-- Flash/OLA, in SQL). Each grouping set groups by one level's labels per quasi-identifier
-- ($sets), so each group is an equivalence class E of that node; GROUPING() names the node back
-- ($grouping: g_j, the bit mask of QI j's level columns, the grouped one 0). Per node: its
-- classes, the rows in classes with |E| < k (what local suppression must take: the node is
-- k-anonymous within the limit when this is at most it), and the utility's loss summed over the
-- cells: $kept, Σ_j Σ_rows loss_j(label) for a class kept, $dropped, Σ_j Σ_rows loss_j(⊥) for a
-- class suppressed whole (ARX's loss metric: |E| Σ_j loss_j and |E| M).
SELECT $node, COUNT(*) AS classes,
       SUM(CASE WHEN n < $k THEN n ELSE 0 END) AS suppressed,
       SUM(CASE WHEN n < $k THEN dropped ELSE kept END) AS loss
FROM (
  SELECT $grouping, SUM(anonsql_n) AS n, $kept AS kept, $dropped AS dropped
  FROM $base
  GROUP BY GROUPING SETS ($sets)
) AS e
GROUP BY $node
