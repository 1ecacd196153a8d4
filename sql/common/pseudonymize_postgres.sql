-- Keyed pseudonyms (--pseudonymize), PostgreSQL: the same HMAC-SHA256(K, v) in hex as
-- sql/common/pseudonymize.sql, over v's text in Unicode NFC ($text, sql/common/text_nfc_postgres.sql),
-- with PostgreSQL's own sha256(bytea) and convert_to (written schema-qualified so that they
-- pass through unchanged). NULL stays NULL.
UPDATE $tbl SET $col = pg_catalog.encode(pg_catalog.sha256($opad || pg_catalog.sha256(
  $ipad || pg_catalog.convert_to($text, 'UTF8'))), 'hex')
