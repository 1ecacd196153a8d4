-- Keyed pseudonyms (--pseudonymize), DuckDB: every value v becomes HMAC-SHA256(K, v) in hex,
-- RFC 2104: H((K xor opad) || H((K xor ipad) || v)) over the UTF-8 text of v in Unicode NFC
-- ($text: v's text through sql/common/text_nfc.sql, so both spellings of é get one pseudonym;
-- ASCII text is unchanged by NFC, so its pseudonyms are those of earlier versions). The two
-- padded keys are derived from K in Python and bound as parameters: the key is never stored.
-- NULL stays NULL.
UPDATE $tbl SET $col = SHA256($opad || UNHEX(SHA256($ipad || ENCODE($text))))
