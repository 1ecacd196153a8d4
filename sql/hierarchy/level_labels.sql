-- What one hierarchy level publishes on a column ($label: the level's label expression):
-- distinct labels, the rows they cover, and the first labels in text order (NULL is ⊥).
SELECT COUNT(DISTINCT $label) AS labels, COUNT($label) AS covered, MIN($label) AS first_label,
       MAX($label) AS last_label
FROM $tbl
