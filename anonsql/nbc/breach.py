"""The attacker of Section 4 on tiny tables: every world consistent with the views, exactly.

A world assigns, within each class, attribute values to the P_c tuples so that every view
π_{A_i,C} is matched: the first attribute fixes the tuples' order and every other attribute
is a distinct permutation of its multiset of values (Figure 1 lists the worlds this way:
d_1..d_10 for V_1). Worlds are equally likely (Section 4's uniform assumption).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from math import comb

from ..errors import AnonsqlError

#: Enumeration is exponential; refuse views with more worlds than this.
MAX_WORLDS = 2_000_000


def _perms(items: list) -> Iterator[tuple]:
    """Distinct permutations of a multiset, each once."""
    if not items:
        yield ()
        return
    for x in sorted(set(items)):
        rest = list(items)
        rest.remove(x)
        for tail in _perms(rest):
            yield (x,) + tail


def _multinomial(counts: Sequence[int]) -> int:
    total, out = 0, 1
    for c in counts:
        total += c
        out = out * comb(total, c)
    return out


@dataclass
class Breach:
    """Section 4 for one quasi-identifier value I_0 and each class c."""

    worlds: int
    prior: dict[object, Fraction]  # eq. (3) under the uniform assumption: 1/|C| by symmetry
    posterior: dict[object, Fraction]  # eq. (4): mean over consistent worlds of P[t.C=c | t.I=I_0]
    class_share: dict[object, Fraction]  # P_c/|T|, the "overall distribution" prior of Section 1


def breach(P: Mapping[object, int], N: Sequence[Mapping[tuple, int]], known: Mapping[int, object]) -> Breach:
    """Enumerate the worlds of views P[c], N[i][(t, c)] and the posterior of I_0 = `known`
    (attribute index -> value). Worlds without a tuple matching I_0 are not in D (Section 4)."""
    classes = list(P)
    per_class: list[Counter] = []
    total_worlds = 1
    for c in classes:
        columns = []
        for i, view in enumerate(N):
            col = [t for (t, cc), k in sorted(view.items(), key=lambda kv: repr(kv[0])) if cc == c for _ in range(k)]
            if len(col) != P[c]:
                raise AnonsqlError(f"view {i} has {len(col)} tuples of class {c!r}, P_c says {P[c]}")
            columns.append(col)
        size = 1
        for col in columns[1:]:
            size *= _multinomial(list(Counter(col).values()))
        total_worlds *= size
        if total_worlds > MAX_WORLDS:
            raise AnonsqlError(f"more than {MAX_WORLDS:,} possible worlds: the breach tool is for tiny tables")
        matches: Counter = Counter()  # number of tuples matching I_0 -> number of worlds
        for perm in product(*(_perms(col) for col in columns[1:])):
            rows = zip(columns[0], *perm)
            matches[sum(all(row[i] == v for i, v in known.items()) for row in rows)] += 1
        per_class.append(matches)
    post = {c: Fraction(0) for c in classes}
    worlds = 0
    for combo in product(*(list(m.items()) for m in per_class)):
        hits = [h for h, _ in combo]
        weight = 1
        for _, w in combo:
            weight *= w
        if sum(hits) == 0:
            continue  # not in D
        worlds += weight
        for c, h in zip(classes, hits):
            post[c] += Fraction(h, sum(hits)) * weight
    if worlds == 0:
        raise AnonsqlError("no consistent world contains a tuple with the given quasi-identifier value")
    total = sum(P.values())
    return Breach(worlds, {c: Fraction(1, len(classes)) for c in classes},
                  {c: v / worlds for c, v in post.items()}, {c: Fraction(P[c], total) for c in classes})
