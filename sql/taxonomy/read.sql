-- The nodes of one stored taxonomy, in their stored pre-order.
SELECT value, parent FROM $tbl WHERE taxonomy = $taxonomy ORDER BY position
