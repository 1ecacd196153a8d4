"""Plain numpy transcription of Algorithms 1-3: the yardstick the compiled loop must match.

Every iteration evaluates Γ(t, t') for all same-class candidates t' in one vectorised pass,
exactly as line 5 of Algorithm 1 reads. It is kept simple on purpose (and is ~20x slower
than `anonsql.kanon.fast`); tests require both to return identical decisions.
"""

from __future__ import annotations

import numpy as np

from .diversity import class_holds
from .model import PreparedTable


class _Costs:
    """Γ_ham / Γ_info / Γ_mar / Γ_hybrid of one tuple t against many tuples t' of its class.

    Logarithms come from the prepared table's log tables and every sum runs over j in ascending order,
    the same arithmetic, operation by operation, as the compiled loop.
    """

    def __init__(self, prepared: PreparedTable, ncur: list[np.ndarray], dcur: np.ndarray):
        self.p = prepared
        self.ncur = ncur  # N(x_j, c) of the current dataset D^(l), updated in place by the loop
        self.dcur = dcur  # N(¬⊥_j, c) of D^(l)

    def _log_a(self, x):
        """log(x + α) for integer counts x."""
        return self.p.log_table[self.p.a_row][x + self.p.a_shift]

    def _log_v(self, j, x):
        """log(x + α|V_j|) for integer counts x."""
        return self.p.log_table[self.p.v_rows[j]][x + self.p.v_shift[j]]

    def _a_term(self, j, values, weights, c):
        """p̂(y_j|c) log((N(y_j,c)+α) / (N(y_j,c)-w_j+α)): the first terms of eq. 10 (0 for ⊥)."""
        nonnull = values >= 0
        v = np.where(nonnull, values, 0)
        n_now = self.ncur[j][:, c][v]
        w = np.where(nonnull, weights, 0)
        return np.where(nonnull, self.p.phat[j][:, c][v] * (self._log_a(n_now) - self._log_a(n_now - w)), 0.0)

    def __call__(self, y, n, c, cand_codes, cand_counts) -> np.ndarray:
        """Γ(t, t') for t = (y, c) with N(y,c) = n and every row of cand_codes / cand_counts."""
        p = self.p
        ham = np.zeros(len(cand_counts), dtype=np.int64)
        info = np.zeros(len(cand_counts))
        mar = np.zeros(len(cand_counts))
        for j in range(len(y)):
            yj = int(y[j])
            col = cand_codes[:, j]
            differ = col != yj  # SUPPRESS (Alg. 2) nulls exactly these cells
            w_t = n if yj >= 0 else 0  # w_j(t) of eq. 10
            w_u = np.where(col >= 0, cand_counts, 0)  # w_j(t')
            if p.cost in ("ham", "hybrid"):  # eq. 1: cells newly suppressed, with multiplicity
                ham += np.where(differ, w_t + w_u, 0)
            if p.cost == "info":  # eq. 2: lost self-information, log p̂(⊥|c) = 0
                lp_t = n * p.log_phat[j][yj, c] if yj >= 0 else 0.0
                lp_u = np.where(col >= 0, cand_counts * p.log_phat[j][np.maximum(col, 0), c], 0.0)
                info = info + np.where(differ, lp_t + lp_u, 0.0)
            if p.cost in ("mar", "hybrid"):  # eq. 10
                a_t = self._a_term(j, np.array([yj]), np.array([n]), c)[0]
                a_u = self._a_term(j, col, cand_counts, c)
                d = self.dcur[j, c]
                g = self._log_v(j, d - w_t - w_u) - self._log_v(j, d)
                mar = mar + np.where(differ, a_t + a_u + g, 0.0)
        if p.cost == "ham":
            return ham.astype(np.float64)
        if p.cost == "info":
            return -info
        mar = p.class_prior[c] * mar  # eq. 11
        if p.cost == "mar":
            return mar
        ham = ham.astype(np.float64)
        return np.where(mar <= 0, mar / ham, mar * ham)  # eq. 12


def run(prepared: PreparedTable, draws: np.ndarray):
    """ANONYMIZE (Algorithm 1) on canonical arrays.

    Returns (final_codes, gammas, solo, cross, groups): groups = |S| at the end.

    `draws[l]` is the uniform number of iteration l: the violating tuple picked is the one at
    position floor(draws[l] * n_violating) among violating tuples sorted by key.
    """
    n_tuples, n_attrs = prepared.codes.shape
    pat = prepared.codes.copy()  # pattern of the tuple with this key (valid while alive)
    cnt = prepared.counts.copy()
    cls = prepared.classes
    alive = np.ones(n_tuples, dtype=bool)
    parent = np.arange(n_tuples)  # key -> key of the tuple it was merged into
    ncur = [a.copy() for a in prepared.attr_counts]
    dcur = np.array([a.sum(axis=0) for a in ncur], dtype=np.int64).reshape(n_attrs, prepared.n_classes)
    gamma_of = _Costs(prepared, ncur, dcur)

    where: dict[tuple[bytes, int], int] = {}  # (y, c) in S -> key
    ytot: dict[bytes, int] = {}  # N(y), summed over classes
    hist = [h.copy() for h in prepared.sensitive]  # per sensitive column: N(y, c, v) of the tuple with this key
    yhist: dict[bytes, list[np.ndarray]] = {}  # y -> per sensitive column Σ_c N(y, c, v), the class E's histogram
    holders: dict[bytes, set[int]] = {}  # y -> keys of S with that pattern
    violating = np.zeros(n_tuples, dtype=bool)

    def add(key, y, c, n):
        yb = y.tobytes()
        pat[key], cnt[key], alive[key] = y, n, True
        where[(yb, c)] = key
        ytot[yb] = ytot.get(yb, 0) + n
        holders.setdefault(yb, set()).add(key)
        if hist:
            sums = yhist.setdefault(yb, [np.zeros_like(h[0]) for h in hist])
            for s, h in enumerate(hist):
                sums[s] += h[key]

    def remove(key):
        yb = pat[key].tobytes()
        alive[key] = violating[key] = False
        del where[(yb, int(cls[key]))]
        ytot[yb] -= cnt[key]
        holders[yb].discard(key)
        for s, h in enumerate(hist):
            yhist[yb][s] -= h[key]

    def refresh(yb):
        # a class violates when it holds fewer than k rows or fails a model (issue 32: the same loop)
        bad = ytot.get(yb, 0) < prepared.k or (
            bool(prepared.models) and ytot[yb] > 0
            and not class_holds(prepared.models, yhist[yb], prepared.sensitive_tables, prepared.count_logs))
        for key in holders.get(yb, ()):
            violating[key] = bad

    def replace(keys, u, c):
        """UPDATE (Algorithm 3): the tuples `keys` of class c become u, merged with (u, c) if in S."""
        total = 0
        touched = {u.tobytes()}
        for key in keys:
            newly = (pat[key] >= 0) & (u < 0)
            for j in np.flatnonzero(newly):
                ncur[j][pat[key][j], c] -= cnt[key]
                dcur[j, c] -= cnt[key]
            total += cnt[key]
            touched.add(pat[key].tobytes())
            remove(key)
        existing = where.get((u.tobytes(), c))
        if existing is not None:
            keys = list(keys) + [existing]
            total += cnt[existing]
            remove(existing)
        new_key = min(keys)  # a tuple is named by its smallest input row
        parent[list(keys)] = new_key
        for h in hist:  # the merged tuple's sensitive histogram: the sum of its parts'
            h[new_key] = h[list(keys)].sum(axis=0)
        add(new_key, u, c, total)
        for yb in touched:
            refresh(yb)

    def progressing(t: int, cand: np.ndarray) -> np.ndarray:
        """Which partners in `cand` leave, merged with t, a class u that meets every model (issue 32:
        the cheapest merge that makes progress; the paper's Γ ranks within them). u keeps the cells
        where both agree: one class per mask of kept attributes, whose histogram is that of u now,
        plus t's and t''s where they move into it."""
        keep = (pat[cand] == pat[t]) & (pat[t] >= 0)
        masks, which = np.unique(keep, axis=0, return_inverse=True)  # rows of booleans: any number of QIs
        which = which.reshape(-1)
        joins = ((pat[cand] >= 0) & ~keep).any(axis=1)  # t' changes pattern (else it is in u already)
        shapes = np.where(masks, pat[t], -1).astype(pat.dtype)
        ok = np.ones(len(cand), dtype=bool)
        for s, h in enumerate(hist):
            base = np.zeros((len(masks), h.shape[1]), dtype=np.int64)
            for i, u in enumerate(shapes):  # class u before the merge, plus t when t moves into it
                ub = u.tobytes()
                if ytot.get(ub, 0):
                    base[i] += yhist[ub][s]
                if not (u == pat[t]).all():
                    base[i] += h[t]
            after = base[which] + np.where(joins[:, None], h[cand], 0)
            for model in prepared.models:
                if model.column == s:
                    ok &= model.holds(after, prepared.sensitive_tables[s], prepared.count_logs)
        return ok

    for key in range(n_tuples):
        add(key, pat[key].copy(), int(cls[key]), int(cnt[key]))
    for yb in list(holders):
        refresh(yb)

    all_null = np.full(n_attrs, -1, dtype=pat.dtype)
    gammas: list[float] = []
    solo = cross = 0
    while violating.any():
        viol = np.flatnonzero(violating)
        t = int(viol[min(int(draws[len(gammas)] * viol.size), viol.size - 1)])
        c = int(cls[t])
        cand = np.flatnonzero(alive & (cls == c))
        cand = cand[cand != t]
        if cand.size:
            g = gamma_of(pat[t], int(cnt[t]), c, pat[cand], cnt[cand])
            best = int(np.argmin(g))  # first minimum = smallest key (tie rule)
            if prepared.models and not progressing(t, cand[best:best + 1])[0]:
                # the cheapest merge leaves a class failing a model: the cheapest that does not, if any
                pick = np.flatnonzero(progressing(t, cand))
                best = int(pick[np.argmin(g[pick])]) if pick.size else best
            partner = int(cand[best])
            gammas.append(float(g[best]))
            replace([t, partner], np.where(pat[t] == pat[partner], pat[t], -1).astype(pat.dtype), c)
        elif (pat[t] >= 0).any():
            # Corner case (a), Sec. 2.3 is silent: t has no same-class partner, so suppress it
            # alone to (⊥..⊥, c); Γ is that of a merge with an empty all-⊥ tuple (w_j(t') = 0).
            gammas.append(float(gamma_of(pat[t], int(cnt[t]), c, all_null[None, :], np.zeros(1, dtype=np.int64))[0]))
            replace([t], all_null.copy(), c)
            solo += 1
        else:
            # t = (⊥..⊥, c) is alone in its class and N(⊥..⊥) < k <= N: fully suppress the tuple of
            # another class whose lone suppression is cheapest (ties: smallest key).
            others = np.flatnonzero(alive & (cls != c) & (pat >= 0).any(axis=1))
            costs = np.array([
                gamma_of(pat[o], int(cnt[o]), int(cls[o]), all_null[None, :], np.zeros(1, dtype=np.int64))[0]
                for o in others
            ])
            victim = int(others[int(np.argmin(costs))])
            gammas.append(float(costs.min()))
            replace([victim], all_null.copy(), int(cls[victim]))
            cross += 1

    root = parent.copy()
    for key in range(n_tuples):  # parents always have smaller keys, so one ascending pass resolves
        root[key] = key if parent[key] == key else root[parent[key]]
    return pat[root], gammas, solo, cross, int(alive.sum())
