-- A pseudonymized column holds hex text: its type becomes VARCHAR first (values cast as text).
ALTER TABLE $tbl ALTER COLUMN $col SET DATA TYPE VARCHAR
