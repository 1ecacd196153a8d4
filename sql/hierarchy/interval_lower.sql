-- The lower bound of a numeric value x's range at a hierarchy level `interval:w` (a fragment,
-- the `lo` of the label '[lo,hi)' data/bin_width_label.sql writes): FLOOR(x / w) * w, closed;
-- the upper bound, open, is lo + w. NULL (⊥) stays NULL. $width is a literal (CREATE TABLE AS
-- takes no bind parameters).
SELECT FLOOR($col / $width) * $width
