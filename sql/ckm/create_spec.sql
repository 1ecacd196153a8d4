-- What a CKM table was published from (public: names and parameters, never the key): the source
-- table, its dimensions and margins, how record keys are made, the ptable's D, V, js, pstay and
-- fingerprint. `anonsql tables audit` reads it to re-derive the table.
CREATE TABLE $out (name VARCHAR, value VARCHAR)
