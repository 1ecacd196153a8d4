-- Row removal (only behind --delete-rows): the tuples the algorithms had to delete.
DELETE FROM $out WHERE $key IN (SELECT d.row_key FROM $deleted AS d)
