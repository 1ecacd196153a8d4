-- A quasi-identifier's cell in local recoding's write-back (issue 33, a fragment): the label at
-- the global node's level (the hidden copy $at) where the decision's rung $rung is 0, the
-- decision's label $label at a higher rung, else the cell as the suppression job wrote it ($col:
-- its label, or ⊥).
SELECT CASE WHEN $rung = 0 THEN $at WHEN $rung > 0 THEN $label ELSE $col END
