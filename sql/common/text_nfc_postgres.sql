-- A value's text in Unicode Normalization Form C (NFC), PostgreSQL 13 or later on a UTF8
-- database (pg_catalog.normalize(x, 'NFC') is the function behind the standard's
-- NORMALIZE(x, NFC), written schema-qualified so that it passes through unchanged): the input
-- of a keyed pseudonym, as sql/common/text_nfc.sql on DuckDB. NULL stays NULL.
SELECT pg_catalog.normalize($text, 'NFC')
