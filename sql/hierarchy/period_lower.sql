-- The first instant of the calendar period holding a date or timestamp x (a fragment, the lower
-- bound, closed, of a `date` hierarchy level: day, week from Monday, month, quarter, year); the
-- upper bound, open, is that plus the period's length. NULL (⊥) stays NULL. $unit is a literal.
SELECT DATE_TRUNC($unit, $col)
