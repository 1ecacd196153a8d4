-- Remove a published view that --replace overwrites.
DROP VIEW $tbl
