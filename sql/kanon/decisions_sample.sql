-- PostgreSQL, for the rest of the run's transaction (SET LOCAL): ANALYZE of the decisions samples
-- 3,000 rows (300 x this target), not 30,000; enough for the row count and the code
-- distributions the write-back is planned with (187,000 decisions: 0.24 s -> 0.03 s, same plan;
-- unanalyzed, the planner expects 1 decision and the write-back took 60 % longer).
SELECT set_config('default_statistics_target', '10', TRUE)
