-- Long (row key, item) input as a wide 0/1 staging table: the class and one column per item
-- ($item: r.class and sql/features_item_flag.sql per item). Rows without items stay, all 0.
CREATE TABLE $out AS
SELECT $item
FROM $rows AS r
LEFT JOIN $items AS i ON r.$key = i.$ikey
GROUP BY $group
