-- A column that receives taxonomy labels must hold text: its values are kept as their text.
ALTER TABLE $out ALTER COLUMN $col TYPE VARCHAR
