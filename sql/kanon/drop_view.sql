-- Remove the one-class view of a run without --class.
DROP VIEW IF EXISTS $view
