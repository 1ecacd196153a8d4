-- A table without a class column, seen with one: every row gets the same label $one (C = 1),
-- so the statistics N(y, c), N(x_j, c), N(c) are those of the quasi-identifiers alone.
CREATE TEMPORARY VIEW $view AS SELECT *, $one AS $cls FROM $src
