-- Local recoding's decisions (issue 33): for each tuple (y, c) whose pattern the pass changed, its
-- labels y_j at the global node's level and class c (text: the key), and per quasi-identifier A_j
-- the rung r_j given back (0: the label itself, i: i levels above it; NULL: unchanged) and the
-- label g_j published there.
CREATE TEMPORARY TABLE $decisions ($key VARCHAR, $rung INTEGER, $label VARCHAR)
