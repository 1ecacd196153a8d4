-- Remove a view: a published view that --replace overwrites, or a run's helper view.
DROP VIEW IF EXISTS $tbl
