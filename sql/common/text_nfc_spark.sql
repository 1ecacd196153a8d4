-- A value's text in Unicode Normalization Form C (NFC), Spark: Spark SQL has no NORMALIZE, so
-- this calls ICU4J's static Normalizer.compose(text, compat = FALSE), i.e. NFC, through REFLECT
-- (ICU4J ships with Spark 4 for its collations). The input of a keyed pseudonym, as
-- sql/common/text_nfc.sql on DuckDB. NULL stays NULL (CASE: ICU does not take a NULL).
SELECT CASE WHEN $text IS NULL THEN NULL ELSE REFLECT('com.ibm.icu.text.Normalizer', 'compose', $text, FALSE) END
