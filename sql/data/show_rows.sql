-- A quick look at a table (anonsql show): its first $limit rows as stored, every column
-- ($shown: the column, or its text where the driver cannot convert the type), in no order.
SELECT $shown
FROM $tbl AS t
LIMIT $limit
