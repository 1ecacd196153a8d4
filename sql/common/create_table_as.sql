-- A new table from the source, column by column ($item: a column or a derived expression).
CREATE TABLE $out AS SELECT $item FROM $src
