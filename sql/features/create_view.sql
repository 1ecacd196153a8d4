-- The published projection Π_S(D): the selected feature columns and the class, as a view.
CREATE VIEW $out AS SELECT $item FROM $src
