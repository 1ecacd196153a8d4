-- Values of a column $col whose text is not in Unicode NFC ($nfc: that text through
-- sql/common/text_nfc*.sql): a pseudonym hashes their NFC spelling, which earlier versions did
-- not (they hashed the text as typed), so a copy's report notes how many there were.
SELECT COUNT(*) AS n FROM $tbl WHERE CAST($col AS VARCHAR) <> $nfc
