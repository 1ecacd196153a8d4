-- The private changes relation (--changes): one row per blanked cell pattern. group_key names
-- the rows of a group (y, c) of the source (sql/common/group_key.sql over the quasi-identifiers
-- and the class), column_name the quasi-identifier A_j blanked there, original_value its
-- value x_j as text, row_count the rows N(y, c) that lost it.
CREATE TABLE $changes (group_key VARCHAR, column_name VARCHAR, original_value VARCHAR, row_count BIGINT)
