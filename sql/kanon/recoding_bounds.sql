-- Each level's loss without suppression (issue 33): L_j(l) = Σ N · loss_j_l over the base
-- relation ($total: one sum per QI and level). A node's loss metric is at least Σ_j L_j(l_j)
-- (a suppressed cell loses 1, more than any label), the bound the search prunes by.
SELECT $total FROM $base
