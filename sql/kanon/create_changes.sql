-- The private changes relation (--changes): one row per blanked cell pattern. group_id numbers
-- the changed groups (y, c) of the run, group_values names the group by its ORIGINAL values (a
-- JSON object: column name -> value as text, null for ⊥, the class included), column_name the
-- quasi-identifier A_j blanked there, original_value its value x_j as text, row_count the rows
-- N(y, c) that lost it.
CREATE TABLE $changes (group_id BIGINT, group_values VARCHAR, column_name VARCHAR, original_value VARCHAR,
                       row_count BIGINT)
