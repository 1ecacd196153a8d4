-- Give a table a new name (a verified staging table becomes the output; an old output moves aside).
ALTER TABLE $tbl RENAME TO $new
