-- A value's text in Unicode Normalization Form C (NFC), DuckDB: the input of a keyed pseudonym,
-- so that one value typed two ways (é as U+00E9, or e + U+0301 as macOS writes it: NFD) gets
-- one pseudonym. ASCII text, and any text already in NFC, is unchanged. NULL stays NULL.
SELECT NFC_NORMALIZE($text)
