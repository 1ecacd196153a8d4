-- Each level's loss without suppression (issue 33): L_j(l) = Σ N · min(loss_j_l, loss_j_⊥) over
-- the base relation ($total: one sum per QI and level). A node's loss is at least Σ_j L_j(l_j):
-- each row's cell loses either its label's loss or, suppressed, ⊥'s (ARX's loss metric: ⊥ loses
-- 1, more than any label, so the min is the label's; the MAR cost: either may be larger). The
-- bound the search prunes by.
SELECT $total FROM $base
