-- One item of a long (row key, item) table as a 0/1 column: 1 when the row has the item.
SELECT MAX(CASE WHEN i.$item = $value THEN 1 ELSE 0 END)
