-- The source rows with dimension d replaced by every taxonomy node above its value (the value
-- itself, ..., the root; $ancestors): grouping by d then gives each node's total.
SELECT s.$keep, up.node AS d FROM $src AS s JOIN $ancestors AS up ON CAST(s.$dim AS VARCHAR) = up.leaf
