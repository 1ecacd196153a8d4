-- The source seen recoded at the chosen lattice node (issue 33): each quasi-identifier
-- replaced by its label at its level ($item), every other column as it is. Kameya & Hayashi's
-- bottom-up suppression then runs on this view, and its one CREATE TABLE AS SELECT writes the
-- labels and the NULLs together.
CREATE TEMPORARY VIEW $view AS SELECT $item FROM $src
