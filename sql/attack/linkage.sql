-- Linkage attack: the attacker holds the quasi-identifiers y of the people of $source and matches
-- each to the rows of $published, where a published ⊥ (NULL, a suppressed cell) matches any value
-- and the attacker's own ⊥ only ⊥.
--   pub      the published classes: their values, ⊥ pattern s (attack/null_pattern.sql), size c
--            and one row key k ($pub_k; NULL without a key);
--   att      the attacker classes a (people with the same values y; NULL-safe group key a_id),
--            their number n_a and one key;
--   $matches the pairs (a, published class that matches a): one equi-join per ⊥ pattern in use
--            (attack/linkage_branch.sql), all branches in one UNION ALL;
--   hits     m_a = Σ c over a's matches, the candidates a sees.
-- Returns per m: the attackers Σ n_a, their classes, and the attackers whose one candidate (m = 1)
-- is their own row (own key = the candidate's key: needs the key mapping).
WITH pub AS MATERIALIZED (
  SELECT $pub_qi, $s, COUNT(*) AS $c, MIN($k) AS $k
  FROM (SELECT $pub_qi, $pub_s AS $s, $pub_k AS $k FROM $published) AS published_rows
  GROUP BY $pub_qi, $s
), att AS MATERIALIZED (
  SELECT $qi, $att_g AS $a_id, COUNT(*) AS $n, MIN($att_k) AS $k
  FROM $source
  GROUP BY $qi
), hits AS (
  SELECT $a_id, SUM($c) AS m, MIN($k) AS hit
  FROM $matches
  GROUP BY $a_id
)
SELECT COALESCE(h.m, 0) AS m, SUM(a.$n) AS attackers, COUNT(*) AS classes,
       COALESCE(SUM(a.$n) FILTER (WHERE h.m = 1 AND a.$n = 1 AND a.$k = h.hit), 0) AS correct
FROM att AS a
LEFT JOIN hits AS h ON h.$a_id = a.$a_id
GROUP BY COALESCE(h.m, 0)
ORDER BY 1
