-- --synthetic: a table whose NBC-enabling views are the published counts, one text column per
-- attribute A_i and the class column C (labels as the published tables spell them).
CREATE TABLE $out ($col VARCHAR)
