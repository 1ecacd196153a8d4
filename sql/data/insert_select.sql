-- Fill a new table from a relation: its columns $col from the items $item (casts) of $tbl.
INSERT INTO $out ($col) SELECT $item FROM $tbl
