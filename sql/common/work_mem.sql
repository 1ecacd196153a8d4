-- PostgreSQL: the memory one sort or hash may use in this session, raised to $work_mem only where
-- nobody chose it (the server's default or its configuration file; a value set for the role,
-- the database or the connection's options is kept). At 4 MB the count tables and the joins of
-- a 10^6-row table spill to disk (the statistics stage took 23.5 s instead of 4 s).
SELECT set_config('work_mem', $work_mem, FALSE)
FROM pg_settings
WHERE name = 'work_mem' AND source IN ('default', 'configuration file')
  AND setting::BIGINT * 1024 < $work_mem_bytes
