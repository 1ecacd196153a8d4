-- Keyed pseudonyms (--pseudonymize), DuckDB: every value v becomes HMAC-SHA256(K, v) in hex,
-- RFC 2104: H((K xor opad) || H((K xor ipad) || v)) over the UTF-8 text of v. The two padded
-- keys are derived from K in Python and bound as parameters: the key is never stored. NULL stays NULL.
UPDATE $tbl SET $col = SHA256($opad || UNHEX(SHA256($ipad || ENCODE(CAST($col AS VARCHAR)))))
