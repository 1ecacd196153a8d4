-- The primary cells (status u) of a run, read from its PRIVATE audit: the cells whose protection
-- `tables audit` checks (without the private audit it checks every suppressed cell).
SELECT $label, grouping_id FROM $audit WHERE status = 'u'
