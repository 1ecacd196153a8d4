-- The taxonomy store: one (value, parent) row per node, parent NULL for the root, position
-- the node's pre-order rank (children keep their declared order), so a generalization run
-- can be repeated from the database alone.
CREATE TABLE IF NOT EXISTS $tbl (taxonomy VARCHAR, position INTEGER, value VARCHAR, parent VARCHAR)
