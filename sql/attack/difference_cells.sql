-- Two published safe tables of the same dimensions y_1..y_m as ONE table in the layout the tables'
-- attacker reads (tables/published_cells.sql), with one dimension more, $part: $earlier counts the
-- rows E, $later counts E and the rows added since (A). A cell c of $earlier is (c, 'earlier'); a
-- cell of $later is (c, Total) = (c, 'earlier') + (c, 'added'): its grouping id gets the new last
-- bit set. The cells (c, 'added') are unknown to the attacker (value NULL): rows that name them, so
-- the LP has their unknowns, and so that a pinned one shows what the difference A reveals.
SELECT $label, 'earlier' AS $part, grouping_id * 2 AS grouping_id, level, value, status FROM $earlier
UNION ALL
SELECT $later_label, NULL, grouping_id * 2 + 1, level, value, status FROM $later
UNION ALL
SELECT $later_label, 'added', grouping_id * 2, level, NULL, 'suppressed' FROM $later
