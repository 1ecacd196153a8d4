-- The output starts as an exact copy of the source (the source itself is never touched).
CREATE TABLE $out AS SELECT * FROM $src
