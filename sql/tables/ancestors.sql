-- A stored taxonomy's leaves (values without children), each paired with itself and with every
-- node above it up to the root: grouping rows by the node gives every node's total.
WITH RECURSIVE up AS (
  SELECT t.value AS leaf, t.value AS node
  FROM $store AS t
  WHERE t.taxonomy = $taxonomy
    AND NOT EXISTS (SELECT 1 FROM $store AS c WHERE c.taxonomy = $taxonomy AND c.parent = t.value)
  UNION ALL
  SELECT up.leaf, t.parent
  FROM up JOIN $store AS t ON t.taxonomy = $taxonomy AND t.value = up.node
  WHERE t.parent IS NOT NULL
)
SELECT leaf, node FROM up
