-- Linkage attack: the attacker holds the quasi-identifiers of the people of $source and matches
-- each to the rows of $published, where a published ⊥ (NULL, a suppressed cell) matches any value
-- and the attacker's own ⊥ only ⊥.
--   pub      the published classes: group key g of their values (common/group_key.sql), ⊥ pattern s
--            (attack/null_pattern.sql), size c and one row key k ($pub_k; NULL without a key);
--   att      the attacker's classes a: people with the same QI values, their number n_a, one key;
--   linked   m_a = Σ c over the published classes that match a: for each pattern s in use, a's
--            values with the positions of s set to ⊥ (attack/masked_value.sql) must equal the
--            class's values; one equality of group keys per pattern, so a hash join, never pairs.
-- Returns per number of candidates m: the attackers Σ n_a, their classes, and the attackers whose
-- one candidate (m = 1) is their own row (own key = the candidate's key: needs the key mapping).
WITH pub AS (
  SELECT g, s, COUNT(*) AS c, MIN(k) AS k
  FROM (SELECT $pub_g AS g, $pub_s AS s, $pub_k AS k FROM $published) AS published_rows
  GROUP BY g, s
), patterns AS (
  SELECT DISTINCT s FROM pub
), att AS (
  SELECT $qi, COUNT(*) AS n, MIN($att_k) AS k
  FROM $source
  GROUP BY $qi
), linked AS (
  SELECT MIN(a.n) AS n, COALESCE(SUM(pub.c), 0) AS m, MIN(a.k) AS own, MIN(pub.k) AS hit
  FROM att AS a
  CROSS JOIN patterns
  LEFT JOIN pub ON pub.s = patterns.s AND pub.g = $masked_g
  GROUP BY $a_qi
)
SELECT m, SUM(n) AS attackers, COUNT(*) AS classes,
       COALESCE(SUM(n) FILTER (WHERE m = 1 AND n = 1 AND own = hit), 0) AS correct
FROM linked
GROUP BY m
ORDER BY m
