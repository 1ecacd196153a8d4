-- Planner statistics for a fresh working table (PostgreSQL never auto-analyzes temporary
-- tables): without them a join to a small dictionary or decisions table is planned blind.
ANALYZE $tbl
