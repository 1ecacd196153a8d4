-- The rows of a relation as the given items (columns or cast expressions), in scan order.
SELECT $item FROM $tbl
