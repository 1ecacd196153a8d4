/*
 * Compiled loop of Kameya & Hayashi (2016), Algorithms 1-3 (ANONYMIZE / SUPPRESS / UPDATE).
 *
 * It makes exactly the decisions of anonsql/kanon/reference.py, with the same floating-point
 * operations in the same order for every cost it compares (both read logarithms from one
 * table built by numpy), so the two agree bit for bit. What makes it fast is the search for
 * t* = argmin_{t'} Γ(t, t') (line 5 of Algorithm 1): instead of evaluating every tuple of the
 * class, the tuples of each class live in prefix tries, one per count band (N(y',c) in
 * {1}, {2}, {3,4}, {5..8}, {9..16}, ..., then one band for the sparse high counts: band_of).
 * For a fixed t and a band [lo, hi], Γ is a sum over attributes of per-cell terms; each term
 * has a lower bound that depends only on the attribute's value (eqs. 1 and 2 grow with
 * N(y',c); eq. 10's term has one minimum in N(y',c), found in closed form), so a depth-first
 * branch and bound skips every subtree whose bound exceeds the best Γ found so far. Leaves are
 * evaluated exactly; the bounds carry a
 * rounding allowance derived relative to the magnitudes involved (see "Exactness of the
 * pruning" below), so no leaf that could beat or tie the best is ever skipped, and ties go to the
 * smallest key, as in the reference. On Adult k=10 a search expands ~140 trie nodes where
 * the reference evaluates ~6,000 tuples; on 10^6 synthetic rows ~210 instead of ~60,000.
 * The rest is memory traffic: the tries are laid out afresh (siblings adjacent) whenever merged
 * tuples have scattered enough nodes (trie_layout), a chain reads its tuple's codes from one
 * line (kcodes) and so does the exact Γ of its leaf, an update reads the tuple's nodes from its
 * path (all requested at once, not up parent links one miss at a time), a band of few tuples
 * is evaluated leaf by leaf (scan_band) instead of paying band_bounds, the bracket of eq. 10's
 * minimum is found once per search and value, not once per band (mar_bracket), and in the
 * narrow bands eq. 10's term is evaluated at each count instead, from per-value parts kept
 * across searches (see NARROW). The bounds are compiled once per cost and kind of band, with what
 * they read of St held in locals (band_bounds_as), a leaf of a narrow band takes its exact Γ from
 * the parts its band's bounds were made of (pair_cost_narrow), and a band whose root is hopeless
 * is never entered. None of these changes a decision (see each).
 *
 * Why C and not numba: the module then costs nothing at run time (numba's import alone takes
 * ~0.3 s warm and its first compile seconds), there is no new dependency, and the tries,
 * hash table and Fenwick tree are plain C data structures.
 *
 * Compile without -ffast-math and with -ffp-contract=off: bitwise agreement with numpy needs
 * IEEE double arithmetic with no reassociation and no fused multiply-add.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

enum { COST_HAM = 0, COST_INFO = 1, COST_MAR = 2, COST_HYBRID = 3 };
#define NBANDS 64
#define PROGRESS_EVERY 1024

typedef int64_t i64;
typedef int32_t i32;

/*
 * A trie node: the value of its level's attribute, first child (at a leaf: the tuple's key),
 * next sibling, the smallest key below it (lets ties be settled without a visit) and the
 * number of tuples below it (a node with one tuple below is a chain: see search_band). Only
 * updates go up the trie: they read a live tuple's nodes from its path (St.path), not from
 * parent links, so trie_remove requests all M nodes at once instead of one cache miss after
 * another, and the cache lines a search reads hold only what it needs. Siblings are singly
 * linked: node_unlink finds a node's predecessor from the parent's first child, among siblings
 * that mostly share its cache lines, where a previous-sibling link had to be rewritten in the
 * next sibling (one more miss per removal at 10^7 rows).
 */
typedef struct {
    i32 val, first, next, minkey, size;
} Node;

/* An entry of the search's stack: a child met while expanding a trie node at depth - 1, its
 * bound and the partial sums down to it (ph only for the hybrid cost). */
typedef struct Kid {
    double bound, pm, ph, pe;
    i32 node, minkey, depth;
    uint32_t kept; /* the search for progress (hbits): the attributes the node's codes share with t */
} Kid;

typedef struct {
    /* the problem (Section 2.1) */
    i64 T, M, C, k;
    int cost;
    double alpha;       /* pseudo count α */
    const i64 *voff;    /* M+1: values of attribute j are voff[j] .. voff[j+1]-1 in per-value arrays */
    i64 *ncur;          /* voff[M] x C: N(x_j, c) of the current dataset D^(l) */
    i64 *dcur;          /* M x C: N(¬⊥_j, c) of D^(l) */
    const double *phat; /* voff[M] x C: p̂(x_j | c) of the original dataset */
    const double *lphat;/* voff[M] x C: log p̂(x_j | c) */
    const double *prior;/* C: p̂(c) */
    const double *ltab; /* logarithms of integer counts, see model._log_tables */
    i64 ltab_bytes;     /* its size: band_bounds requests its reads ahead only where it outgrows the caches */
    i64 a_base;         /* log(x + α) = ltab[a_base + x] */
    const i64 *v_base;  /* log(x + α|V_j|) = ltab[v_base[j] + x] */
    const i64 *order;   /* trie level d holds attribute order[d] */
    i64 *level;         /* M: the trie level of attribute j (order's inverse) */
    /* tuples of S, named by key = smallest canonical input row they hold */
    i32 *pid;           /* pattern id */
    i64 *cnt;           /* N(y, c) */
    const i64 *cls;
    char *alive;
    i32 *parent;        /* key -> key of the tuple it was merged into (itself while alive) */
    i32 *path;          /* T x M: trie nodes of a live tuple, level d at path[key * M + d] (d = M-1: its leaf) */
    i32 *pnext, *pprev; /* live keys sharing a pattern (one per class at most) */
    i32 *kcodes;        /* T x M: codes of a live tuple in trie order (level d at kcodes[key * M + d]) */
    /* distinct patterns y ever seen: hash table, codes, N(y) summed over classes */
    i32 *pcodes;
    i64 *ytot;
    i32 *phead;
    i64 npat, pcap;
    i32 *htab;
    uint64_t hmask;
    /* violating tuples (N(y) < k) as a Fenwick tree over keys, for uniform picks by rank */
    i32 *fen;
    char *viol;
    i64 nviol, fstep;
    /* per class: live tuples, trie root and population per count band */
    i64 *class_alive;
    i32 *roots;
    i64 *band_pop;
    i64 nbands;         /* bands a count can fall in: at most doubling(rows) + 1 */
    int8_t band_at[64]; /* band of the counts n with doubling(n) = e, see band_partition */
    i64 band_lo[NBANDS], band_hi[NBANDS]; /* counts of band b: band_lo[b] .. band_hi[b] */
    i32 *vpres;         /* C x nbands x ventries: live tuples of the trie (c, band) with value v at level d;
                           NULL (every value taken as present) where it would outweigh the tries */
    /* trie nodes */
    Node *nodes;
    i64 ncap, nused;
    i32 nfree;
    i64 laid_out, inserted; /* live tuples at the last trie_layout, trie_insert calls since */
    i64 *sorted;        /* T: scratch of trie_layout */
    i64 *radix_tmp;     /* T: scratch of sort_live, swapped with sorted */
    i64 *radix_count;   /* bucket starts of radix_pass: max(|V_j| + 1, nbands, C) + 1 */
    double *lat, *lgbot, *lg; /* M, M, M x NARROW: a narrow band's a_t, g(0) and g(m) per level (band_bounds) */
    /* scratch for the branch and bound */
    i64 ventries;       /* sum_j (|V_j| + 1): one bound slot per value and ⊥ */
    i64 *eoff;          /* M+1: slot offset of trie level d */
    double *bm, *bh;    /* bounds per slot: main cost (Γ_ham/Γ_info/Γ_mar sum) and Γ_ham for hybrid */
    double *be;         /* per slot: how far the exact term of a leaf in the slot can fall below bm */
    double *sufm, *sufh;/* M+1: sum of per-level minima from level d on */
    double *sufe;       /* M+1: sum of per-level maxima of be from level d on */
    double *sta, *stb;  /* per slot: mar_bracket of the current search, valid where ststamp = searches */
    double *au;         /* C x ventries x NARROW: a_u(m) of eq. 10 per class and value slot, see NARROW */
    i64 *au_n;          /* C x ventries: the N(v,c) au was computed for (0: never); NULL: au is scratch */
    i64 *ststamp, searches;
    i64 evaluations;    /* exact Γ evaluations at leaves (the work pruning saves) */
    struct Kid *stk;    /* the search's stack */
    i64 stk_cap;
    /* attribute-disclosure models (issue 32, anonsql.kanon.diversity): NM models on VT histogram
     * slots (each sensitive column's values, ⊥ last); none: the loop is the paper's */
    i64 NM, VT;
    i64 *shist;         /* T x VT: N(y, c, v) of the live tuple with this key */
    i64 *phist;         /* pcap x VT: Σ_c N(y, c, v) of pattern y, the class's histogram */
    i64 *scratch;       /* 3 x VT: a class's histogram after a candidate merge, a sort buffer, u's part (progresses) */
    const i64 *m_kind, *m_off, *m_width; /* per model: MODEL_*, its column's first slot and slots */
    const double *m_thr, *m_span;        /* per model: Model.threshold, and span() for the ordered distance */
    const double *share;                 /* VT: p(v) of the whole table, per column (diversity.share) */
    const double *clog;                  /* ln i of the counts i = 0..N */
    /* progresses' cache, per search: by the attributes a merge keeps (a bit mask, M <= 64), the
     * histogram of the class u it lands in plus t's own when t moves (see progresses); NULL: off */
    i64 *pc_hist;       /* PCACHE x (VT + NM): an entry's histogram, then its value bits (dbits) */
    uint64_t *pc_mask;  /* PCACHE: the mask an entry holds */
    i64 *pc_stamp;      /* PCACHE: the search it was made in (St.searches) */
    /* distinct l-diversity alone (every model MODEL_DISTINCT on at most 64 slots): per live key and
     * model the values its histogram holds, one bit each (bit i: slot m_off + i), which is all
     * progresses needs to know of t'; NULL otherwise */
    uint64_t *dbits;    /* T x NM */
    /* with dbits and M <= HB_MAX_M, the search for progress skips subtrees where no leaf can make
     * progress (see search_band_as): per trie node an over-approximation of the values below it
     * (OR of its tuples' dbits, set on insertion and at every trie_layout, left as it was when a
     * tuple leaves), and per search the values the class u (plus t) can hold (prepare_hbits) */
    uint64_t *nbits;    /* ncap x NM */
    uint64_t *hbits;    /* (M + 1) x 2^M x NM */
} St;

enum { MODEL_DISTINCT = 0, MODEL_ENTROPY = 1, MODEL_RECURSIVE = 2, MODEL_T_EQUAL = 3, MODEL_T_ORDERED = 4 };

/* ---------- counts and costs ---------------------------------------------------------- */

static inline i64 vidx(const St *s, i64 j, i64 v, i64 c) { return (s->voff[j] + v) * s->C + c; }

/*
 * Γ(t, t') for t = (y, c) with N(y,c) = n and t' = (y2, c) with N(y2,c) = n2, computed with
 * the current counts (Section 3.3: q̂ is that of D^(l)). Same operations, same order as
 * reference._Costs: sums run over j ascending, term_j = (a_t + a_u) + g. y2 holds attribute j
 * at y2[at2[j]] (at2 = St.level: a tuple's kcodes line, which a chain has just read), or at
 * y2[j] if at2 is NULL.
 */
static inline __attribute__((always_inline)) double pair_cost_at(const St *s, const i32 *y, i64 n, i64 c,
                                                                 const i32 *y2, const i64 *at2, i64 n2) {
    double mar = 0.0, info = 0.0;
    i64 ham = 0;
    const double *L = s->ltab;
    for (i64 j = 0; j < s->M; j++) {
        i32 a = y[j], b = at2 ? y2[at2[j]] : y2[j];
        if (a == b) continue; /* SUPPRESS (Alg. 2) keeps equal cells */
        i64 wt = a >= 0 ? n : 0, wu = b >= 0 ? n2 : 0; /* w_j(t), w_j(t') of eq. 10 */
        if (s->cost == COST_HAM || s->cost == COST_HYBRID) ham += wt + wu; /* eq. 1 */
        if (s->cost == COST_INFO) {                                        /* eq. 2 */
            double lt = a >= 0 ? (double)n * s->lphat[vidx(s, j, a, c)] : 0.0;
            double lu = b >= 0 ? (double)n2 * s->lphat[vidx(s, j, b, c)] : 0.0;
            info += lt + lu;
        }
        if (s->cost == COST_MAR || s->cost == COST_HYBRID) { /* eq. 10 */
            double at = 0.0, au = 0.0;
            if (a >= 0) {
                i64 q = vidx(s, j, a, c), N = s->ncur[q];
                at = s->phat[q] * (L[s->a_base + N] - L[s->a_base + N - n]);
            }
            if (b >= 0) {
                i64 q = vidx(s, j, b, c), N = s->ncur[q];
                au = s->phat[q] * (L[s->a_base + N] - L[s->a_base + N - n2]);
            }
            i64 D = s->dcur[j * s->C + c];
            double g = L[s->v_base[j] + D - wt - wu] - L[s->v_base[j] + D];
            mar += (at + au) + g;
        }
    }
    if (s->cost == COST_HAM) return (double)ham;
    if (s->cost == COST_INFO) return -info;
    mar = s->prior[c] * mar; /* eq. 11 */
    if (s->cost == COST_MAR) return mar;
    double h = (double)ham; /* eq. 12 */
    return mar <= 0 ? mar / h : mar * h;
}

static double pair_cost(const St *s, const i32 *y, i64 n, i64 c, const i32 *y2, i64 n2) {
    return pair_cost_at(s, y, n, c, y2, NULL, n2);
}

/* ---------- patterns: open addressing hash table, entries never deleted ----------------- */

static uint64_t hash_codes(const i32 *p, i64 M) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (i64 j = 0; j < M; j++) {
        h ^= (uint64_t)(uint32_t)p[j] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 33);
}

/* Pattern id of y, or -1 if never seen. */
static i64 pattern_find(const St *s, const i32 *y) {
    uint64_t h = hash_codes(y, s->M) & s->hmask;
    while (s->htab[h] >= 0) {
        i32 p = s->htab[h];
        if (memcmp(s->pcodes + (i64)p * s->M, y, sizeof(i32) * s->M) == 0) return p;
        h = (h + 1) & s->hmask;
    }
    return -1;
}

/* Pattern id of y, added if new. */
static i64 pattern_id(St *s, const i32 *y) {
    uint64_t h = hash_codes(y, s->M) & s->hmask;
    while (s->htab[h] >= 0) {
        i32 p = s->htab[h];
        if (memcmp(s->pcodes + (i64)p * s->M, y, sizeof(i32) * s->M) == 0) return p;
        h = (h + 1) & s->hmask;
    }
    if (s->npat >= s->pcap) return -1; /* cannot happen: pcap bounds the patterns ever made */
    i64 p = s->npat++;
    memcpy(s->pcodes + p * s->M, y, sizeof(i32) * s->M);
    s->ytot[p] = 0;
    s->phead[p] = -1;
    s->htab[h] = (i32)p;
    return p;
}

/* ---------- violating set ------------------------------------------------------------- */

static void fen_add(St *s, i64 key, i32 delta) {
    for (i64 i = key + 1; i <= s->T; i += i & (-i)) s->fen[i] += delta;
}

/* The violating key of rank r (0-based) in ascending key order. */
static i64 fen_find(const St *s, i64 r) {
    i64 pos = 0, rem = r + 1;
    for (i64 step = s->fstep; step > 0; step >>= 1) {
        if (pos + step <= s->T && s->fen[pos + step] < rem) {
            pos += step;
            rem -= s->fen[pos];
        }
    }
    return pos;
}

static void set_violating(St *s, i64 key, int flag) {
    if (s->viol[key] == flag) return;
    s->viol[key] = (char)flag;
    fen_add(s, key, flag ? 1 : -1);
    s->nviol += flag ? 1 : -1;
}

/*
 * Does a class with histogram h (VT slots) meet every model? The operations and their order of
 * anonsql.kanon.diversity.Model.holds: sums left to right, logarithms from the same table, the
 * thresholds and the table's shares computed by numpy, so both loops decide alike.
 */
static int models_hold(St *s, const i64 *h) {
    for (i64 m = 0; m < s->NM; m++) {
        const i64 *x = h + s->m_off[m], w = s->m_width[m], kind = s->m_kind[m];
        const double *p = s->share + s->m_off[m];
        i64 n = 0, distinct = 0;
        for (i64 i = 0; i < w; i++) { n += x[i]; distinct += x[i] > 0; }
        if (kind == MODEL_DISTINCT) {
            if (!((double)distinct >= s->m_thr[m])) return 0;
        } else if (kind == MODEL_ENTROPY) {
            double acc = 0.0;
            for (i64 i = 0; i < w; i++) acc += (double)x[i] * s->clog[x[i] > 0 ? x[i] : 1];
            if (!(s->clog[n] - acc / (double)n >= s->m_thr[m])) return 0;
        } else if (kind == MODEL_RECURSIVE) {
            i64 *r = s->scratch + s->VT, l = (i64)s->m_span[m]; /* the counts, sorted descending */
            for (i64 i = 0; i < w; i++) {
                i64 v = x[i], j = i;
                for (; j > 0 && r[j - 1] < v; j--) r[j] = r[j - 1];
                r[j] = v;
            }
            i64 tail = 0;
            for (i64 i = l - 1; i < w; i++) tail += r[i];
            if (!((double)r[0] < s->m_thr[m] * (double)tail)) return 0;
        } else {
            double acc = 0.0, cum = 0.0;
            for (i64 i = 0; i < w; i++) {
                double diff = (double)x[i] / (double)n - p[i];
                if (kind == MODEL_T_EQUAL) acc += fabs(diff);
                else { cum += diff; acc += fabs(cum); }
            }
            double d = kind == MODEL_T_EQUAL ? acc / 2.0 : acc / s->m_span[m];
            if (!(d <= s->m_thr[m])) return 0;
        }
    }
    return 1;
}

/* The values histogram h (VT slots) holds, per model, as dbits lays them out. */
static void value_bits(const St *s, const i64 *h, uint64_t *bits) {
    for (i64 m = 0; m < s->NM; m++) {
        uint64_t b = 0;
        for (i64 i = 0; i < s->m_width[m]; i++) b |= (uint64_t)(h[s->m_off[m] + i] > 0) << i;
        bits[m] = b;
    }
}

/* Re-test N(y) < k, and the models, for every live tuple with pattern p. */
static void refresh(St *s, i64 p) {
    int bad = s->ytot[p] < s->k || (s->NM && s->ytot[p] > 0 && !models_hold(s, s->phist + p * s->VT));
    for (i32 key = s->phead[p]; key >= 0; key = s->pnext[key]) set_violating(s, key, bad);
}

/* ---------- tries: one per (class, count band) ----------------------------------------- */

/*
 * Count bands: one doubling each ({1}, {2}, {3,4}, {5..8}, ..., (2^(e-1), 2^e]), up to the tail:
 * one last band for every count from the doubling where fewer than TAIL_POP live tuples lie
 * above, chosen again at every trie_layout from the counts of then (merged tuples' counts grow;
 * between layouts a count that crosses an edge goes to the tries of its band, present or not).
 * Any partition is exact (bands only group the tuples a search visits, band_range bounds every
 * count of a band); this one is about speed. Each band costs every search one band_bounds pass
 * (its log reads miss the cache at scale), which buys nothing in the high doublings, whose few
 * tuples are mostly pruned at the root; the tail saves those passes. Only the top is merged: a
 * band's bound takes each attribute's term at its own best count, and where the counts that
 * minimise eq. 10's terms fall inside a wide band (at 10^8 rows, counts of a few dozen to a few
 * hundred) the terms' minima stop adding up to anything near Γ (its first orders cancel) and the
 * search expands most of the band: {33..256} as one band made the loop 5x slower at 10^8 rows
 * ({9..8192} as one band did not finish in 15 minutes), while there a tail of 41,600 tuples from
 * 257 up cost ~2 node visits per search. Loop CPU time, one doubling per band throughout against
 * TAIL_POP 30,000 (with NARROW 16), same decisions and Γ: Adult k=10 0.127-0.135 s / 0.116-0.120
 * s; the benchmark's 10^7 Adult-like rows (794,022 tuples, tail from 65) 18.7-19.1 s / 15.6-15.7
 * s; 10^8 rows (2,736,776 tuples, tail from 513) 79-95 s / 72-84 s (the machine was shared). A
 * cap of 150,000 was faster at 10^7 (15.0 s) but at 10^8 it let in {33..256} as described.
 * Likewise {2} and {3,4} are one band {2..4} while fewer than TAIL_POP live tuples lie in it (one
 * band_bounds pass less per search): Adult k=10 0.090 -> 0.086 s. Merged throughout, it made 10^8
 * rows slower (63-66 s against 60-63 s: {2..4} then holds millions of tuples, and its looser
 * bounds cost more than the pass; merged only while small, 10^7 rows 12.2 s as before, 10^8 rows
 * 56.7 s); {1,2} as one band made Adult 0.146 s, {5..16} and {2..8} gained nothing.
 */
#define FINE_BANDS 4  /* bands {1}, {2}, {3,4}, {5..8}, {9..16}: narrow (see NARROW), never in the tail */
#define TAIL_POP 30000

/* 0 for n = 1, else e with 2^(e-1) < n <= 2^e */
static inline int doubling(i64 n) { return n <= 1 ? 0 : 64 - __builtin_clzll((unsigned long long)(n - 1)); }

static inline int band_of(const St *s, i64 n) { return s->band_at[doubling(n)]; }

static inline void band_range(const St *s, int b, i64 *lo, i64 *hi) {
    *lo = s->band_lo[b];
    *hi = s->band_hi[b];
}

/* The bands for the live keys sorted[0..live): doublings up to the tail, {2..4} merged while
 * small, see above. Band numbers stay doublings (a merged {3,4} leaves band 2 empty). */
static void band_partition(St *s, i64 live) {
    i64 hist[64] = {0};
    for (i64 i = 0; i < live; i++) hist[doubling(s->cnt[s->sorted[i]])]++;
    int tail = 63;
    for (i64 pop = hist[63]; tail > FINE_BANDS + 1 && pop + hist[tail - 1] < TAIL_POP; tail--) pop += hist[tail - 1];
    const int merge = hist[1] + hist[2] < TAIL_POP; /* {3,4} joins {2}; tail > FINE_BANDS + 1 > 2 */
    for (int e = 0; e < 64; e++) {
        int b = e == 2 && merge ? 1 : e < tail ? e : tail;
        s->band_at[e] = (int8_t)b;
        if (e <= tail && b == e) s->band_lo[b] = e == 0 ? 1 : ((i64)1 << (e - 1)) + 1;
        s->band_hi[b] = e > 62 ? INT64_MAX : (i64)1 << e; /* counts are below 2^63 */
    }
}

static i32 node_new(St *s, i32 parent, i32 value, i32 key) {
    i32 x;
    if (s->nfree >= 0) {
        x = s->nfree;
        s->nfree = s->nodes[x].next;
    } else {
        if (s->nused >= s->ncap) return -1;
        x = (i32)s->nused++;
    }
    Node *nd = &s->nodes[x];
    if (s->nbits) memset(&s->nbits[(i64)x * s->NM], 0, sizeof(uint64_t) * (size_t)s->NM);
    nd->val = value;
    nd->first = -1;
    nd->next = -1;
    nd->minkey = key;
    nd->size = 0;
    if (parent >= 0) { /* push front into the parent's children */
        Node *pa = &s->nodes[parent];
        nd->next = pa->first;
        pa->first = x;
    }
    return x;
}

static void node_unlink(St *s, i32 x, i32 parent) {
    Node *nd = &s->nodes[x], *pa = &s->nodes[parent];
    if (pa->first == x) {
        pa->first = nd->next;
    } else {
        i32 y = pa->first;
        while (s->nodes[y].next != x) y = s->nodes[y].next;
        s->nodes[y].next = nd->next;
    }
    nd->next = s->nfree;
    s->nfree = x;
}

/* Count the live tuple key in or out of the values present per level in the trie (c, band b). */
static void present(St *s, i64 c, int b, i64 key, i32 delta) {
    if (!s->vpres) return;
    i32 *pres = s->vpres + (c * s->nbands + b) * s->ventries;
    const i32 *y = s->kcodes + key * s->M;
    for (i64 d = 0; d < s->M; d++) pres[s->eoff[d] + y[d] + 1] += delta;
}

/* The values of key's histogram join the over-approximation of node x's (nbits). */
static inline void node_bits(St *s, i32 x, i64 key) {
    if (!s->nbits) return;
    for (i64 m = 0; m < s->NM; m++) s->nbits[(i64)x * s->NM + m] |= s->dbits[key * s->NM + m];
}

static int trie_insert(St *s, i64 key) {
    i64 c = s->cls[key];
    int b = band_of(s, s->cnt[key]);
    i32 *root = &s->roots[c * NBANDS + b];
    if (*root < 0 && (*root = node_new(s, -1, -1, INT32_MAX)) < 0) return -1;
    const i32 *y = s->kcodes + key * s->M;
    i32 *path = s->path + key * s->M;
    present(s, c, b, key, 1);
    i32 x = *root;
    for (i64 d = 0; d < s->M - 1; d++) {
        s->nodes[x].size++;
        node_bits(s, x, key);
        if (key < s->nodes[x].minkey) s->nodes[x].minkey = (i32)key;
        i32 v = y[d], ch = s->nodes[x].first;
        while (ch >= 0 && s->nodes[ch].val != v) ch = s->nodes[ch].next;
        if (ch < 0 && (ch = node_new(s, x, v, (i32)key)) < 0) return -1;
        x = path[d] = ch;
    }
    s->nodes[x].size++;
    node_bits(s, x, key);
    if (key < s->nodes[x].minkey) s->nodes[x].minkey = (i32)key;
    /* the leaf: (y, c) is unique in S, so it is always new */
    i32 lf = node_new(s, x, y[s->M - 1], (i32)key);
    if (lf < 0) return -1;
    node_bits(s, lf, key);
    s->nodes[lf].first = (i32)key;
    s->nodes[lf].size = 1;
    path[s->M - 1] = lf;
    s->band_pop[c * NBANDS + b]++;
    s->inserted++;
    return 0;
}

static void trie_remove(St *s, i64 key) {
    i64 c = s->cls[key];
    int b = band_of(s, s->cnt[key]);
    present(s, c, b, key, -1);
    const i32 *path = s->path + key * s->M, root = s->roots[c * NBANDS + b];
    for (i64 d = 0; d < s->M; d++) __builtin_prefetch(&s->nodes[path[d]]);
    i64 d = s->M - 1;
    for (;; d--) { /* drop the leaf and every ancestor left without children, root excepted */
        i32 p = d > 0 ? path[d - 1] : root;
        node_unlink(s, path[d], p);
        if (d == 0 || s->nodes[p].first >= 0) break;
    }
    for (d--; d >= -1; d--) { /* sizes and min keys above: levels d .. 0, then the root */
        i32 p = d >= 0 ? path[d] : root;
        s->nodes[p].size--;
        if (s->nodes[p].minkey != key) continue;
        i32 m = INT32_MAX;
        for (i32 ch = s->nodes[p].first; ch >= 0; ch = s->nodes[ch].next)
            if (s->nodes[ch].minkey < m) m = s->nodes[ch].minkey;
        s->nodes[p].minkey = m;
    }
    s->band_pop[c * NBANDS + b]--;
}

/* ---------- S and the count table N (Algorithm 3) -------------------------------------- */

static int tuple_add(St *s, i64 key, i64 p, i64 n, int into_trie) {
    s->pid[key] = (i32)p;
    s->cnt[key] = n;
    s->alive[key] = 1;
    s->parent[key] = (i32)key;
    s->ytot[p] += n;
    for (i64 v = 0; v < s->VT; v++) s->phist[p * s->VT + v] += s->shist[key * s->VT + v];
    s->pprev[key] = -1;
    s->pnext[key] = s->phead[p];
    if (s->phead[p] >= 0) s->pprev[s->phead[p]] = (i32)key;
    s->phead[p] = (i32)key;
    s->class_alive[s->cls[key]]++;
    const i32 *y = s->pcodes + p * s->M;
    for (i64 d = 0; d < s->M; d++) s->kcodes[key * s->M + d] = y[s->order[d]];
    return into_trie ? trie_insert(s, key) : 0;
}

/*
 * All tries laid out afresh in one sweep per level over the live keys sorted by (class, band,
 * pattern in trie order): siblings get adjacent nodes, so a search scans them from few cache
 * lines. Same tries as inserting the keys one by one, only laid out better. Done at the start
 * and again once the tuples inserted since (merged tuples, whose nodes land on freed slots
 * scattered over the array) reach a quarter (1/RELAYOUT) of the tuples then laid out. The layout changes no
 * decision, nor even the order of a search's visits: search_band orders the children it pushes
 * by (bound, smallest key below), both functions of the subtree alone, and the smallest keys of
 * disjoint subtrees differ; trie_remove's minimum over children does not depend on their order.
 */
/* Sort digit of key: its code + 1 at trie level `digit` >= 0, its band (-1) or its class (-2). */
static inline i64 sort_digit(const St *s, i64 key, i64 digit) {
    if (digit >= 0) return (i64)s->kcodes[key * s->M + digit] + 1;
    return digit == -1 ? band_of(s, s->cnt[key]) : s->cls[key];
}

/* Stable counting sort of src[0..n) into dst by sort_digit, whose values lie in [0, nb). */
static void radix_pass(St *s, const i64 *src, i64 *dst, i64 n, i64 digit, i64 nb) {
    i64 *start = s->radix_count;
    memset(start, 0, sizeof(i64) * (size_t)(nb + 1));
    for (i64 i = 0; i < n; i++) start[sort_digit(s, src[i], digit) + 1]++;
    for (i64 b = 0; b < nb; b++) start[b + 1] += start[b];
    for (i64 i = 0; i < n; i++) dst[start[sort_digit(s, src[i], digit)]++] = src[i];
}

/*
 * The live keys by (class, band, codes in trie order), ascending: least significant digit first,
 * M + 2 stable counting sorts (O(live x M), no comparisons). Keys are distinct in that order,
 * as (y, c) is unique in S; ties would keep ascending key order. Leaves the result in s->sorted.
 */
static void sort_live(St *s, i64 live) {
    i64 *src = s->sorted, *dst = s->radix_tmp;
    for (i64 digit = s->M - 1; digit >= -2; digit--) {
        i64 nb = digit >= 0 ? s->eoff[digit + 1] - s->eoff[digit] : digit == -1 ? s->nbands : s->C;
        radix_pass(s, src, dst, live, digit, nb);
        i64 *t = src;
        src = dst;
        dst = t;
    }
    s->sorted = src;
    s->radix_tmp = dst;
}

#define RELAYOUT 4
static int trie_layout(St *s) {
    const i64 M = s->M;
    i64 *sorted = s->sorted, live = 0;
    for (i64 key = 0; key < s->T; key++)
        if (s->alive[key]) sorted[live++] = key;
    s->nused = 0;
    s->nfree = -1;
    for (i64 i = 0; i < s->C * NBANDS; i++) {
        s->roots[i] = -1;
        s->band_pop[i] = 0;
    }
    if (s->vpres) memset(s->vpres, 0, sizeof(i32) * (size_t)(s->C * s->nbands * s->ventries));
    s->laid_out = live;
    s->inserted = 0;
    band_partition(s, live);
    sort_live(s, live);
    sorted = s->sorted;
    for (i64 a = 0, b; a < live; a = b) {
        i64 c = s->cls[sorted[a]];
        int band = band_of(s, s->cnt[sorted[a]]);
        for (b = a; b < live && s->cls[sorted[b]] == c && band_of(s, s->cnt[sorted[b]]) == band; b++) {}
        i32 root = node_new(s, -1, -1, INT32_MAX);
        if (root < 0) return -1;
        s->roots[c * NBANDS + band] = root;
        s->band_pop[c * NBANDS + band] = b - a;
        s->nodes[root].size = (i32)(b - a);
        for (i64 i = a; i < b; i++) {
            present(s, c, band, sorted[i], 1);
            node_bits(s, root, sorted[i]);
        }
        for (i64 d = 0; d < M; d++) {
            i32 prev_parent = -1, prev_node = -1;
            for (i64 i = a; i < b; i++) {
                i64 key = sorted[i];
                i32 parent = d == 0 ? root : s->path[key * M + d - 1];
                i32 v = s->kcodes[key * M + d];
                if (d == M - 1 || parent != prev_parent || s->nodes[prev_node].val != v) {
                    /* siblings linked in ascending address order (node_new would push to the front) */
                    i32 x = node_new(s, -1, v, (i32)key);
                    if (x < 0) return -1;
                    if (parent == prev_parent) {
                        s->nodes[prev_node].next = x;
                    } else {
                        s->nodes[parent].first = x;
                    }
                    prev_node = x;
                    prev_parent = parent;
                }
                Node *nd = &s->nodes[prev_node];
                nd->size++;
                node_bits(s, prev_node, key);
                if (key < nd->minkey) nd->minkey = (i32)key;
                if (key < s->nodes[parent].minkey) s->nodes[parent].minkey = (i32)key;
                s->path[key * M + d] = prev_node;
            }
        }
        for (i64 i = a; i < b; i++) s->nodes[s->path[sorted[i] * M + M - 1]].first = (i32)sorted[i];
    }
    return 0;
}

static void tuple_remove(St *s, i64 key) {
    i64 p = s->pid[key];
    trie_remove(s, key);
    s->alive[key] = 0;
    set_violating(s, key, 0);
    s->ytot[p] -= s->cnt[key];
    for (i64 v = 0; v < s->VT; v++) s->phist[p * s->VT + v] -= s->shist[key * s->VT + v];
    if (s->pprev[key] >= 0) s->pnext[s->pprev[key]] = s->pnext[key];
    else s->phead[p] = s->pnext[key];
    if (s->pnext[key] >= 0) s->pprev[s->pnext[key]] = s->pprev[key];
    s->class_alive[s->cls[key]]--;
}

/* The live tuple (y_p, c), or -1. */
static i64 find_tuple(const St *s, i64 p, i64 c) {
    for (i32 key = s->phead[p]; key >= 0; key = s->pnext[key])
        if (s->cls[key] == c) return key;
    return -1;
}

/*
 * UPDATE (Algorithm 3): the tuples keys[0..nk-1] of class c become (u, c); counts of the
 * newly suppressed cells leave N(x_j, c) and N(¬⊥_j, c); (u, c) absorbs a live twin.
 */
static int replace(St *s, i64 *keys, int nk, const i32 *u, i64 c) {
    i64 total = 0, touched[4];
    int nt = 0;
    for (int i = 0; i < nk; i++) {
        i64 key = keys[i];
        const i32 *y = s->pcodes + (i64)s->pid[key] * s->M;
        for (i64 j = 0; j < s->M; j++) {
            if (y[j] >= 0 && u[j] < 0) {
                s->ncur[vidx(s, j, y[j], c)] -= s->cnt[key];
                s->dcur[j * s->C + c] -= s->cnt[key];
            }
        }
        total += s->cnt[key];
        touched[nt++] = s->pid[key];
        tuple_remove(s, key);
    }
    i64 p = pattern_id(s, u);
    if (p < 0) return -1;
    i64 twin = find_tuple(s, p, c);
    if (twin >= 0) {
        total += s->cnt[twin];
        tuple_remove(s, twin);
        keys[nk++] = twin;
    }
    i64 new_key = keys[0];
    for (int i = 1; i < nk; i++) if (keys[i] < new_key) new_key = keys[i];
    for (int i = 0; i < nk; i++) s->parent[keys[i]] = (i32)new_key;
    for (i64 v = 0; v < s->VT; v++) { /* the merged tuple's sensitive histogram: the sum of its parts' */
        i64 sum = 0;
        for (int i = 0; i < nk; i++) sum += s->shist[keys[i] * s->VT + v];
        s->shist[new_key * s->VT + v] = sum;
    }
    if (s->dbits) value_bits(s, s->shist + new_key * s->VT, s->dbits + new_key * s->NM);
    if (tuple_add(s, new_key, p, total, 1) < 0) return -1;
    touched[nt++] = p;
    for (int i = 0; i < nt; i++) refresh(s, touched[i]);
    return 0;
}

/* ---------- branch and bound for t* (line 5 of Algorithm 1) ----------------------------- */

typedef struct {
    const i32 *y;
    i64 n, c, t;
    double best;
    i64 best_key;
    double err0;  /* rounding allowance of the two sums over attributes, see band_bounds */
    int narrow;   /* the band's bounds left what pair_cost_narrow reads (a narrow band, cost mar) */
    i32 *u;       /* not NULL: only partners whose merge makes progress count (progresses, u its scratch) */
} Search;

static int progresses(St *s, i64 t, i64 t2, i32 *u);

#define HB_MAX_M 12
#define HB_MAX_NM 8
/*
 * The values a class u can hold after t merges with any leaf below a trie node, for the search for
 * progress with distinct models alone (hbits). A leaf t' makes u keep t's codes on the attributes
 * where both agree (the mask K, non-null in t): u's histogram is that of pattern y|K now, plus t's
 * when t moves (K short of t's non-null attributes), plus t''s. Level M: per K, the values of the
 * first two (exact). Level d: a node there fixes the codes of the levels above it, so K's bits
 * there; those of the levels from d on are open: the OR over both choices of each, level by level.
 * A node whose bits, with the OR of its tuples' values (nbits, over-approximated), hold fewer than L
 * values for a model holds no leaf whose merge makes progress: the search skips it. u is scratch.
 */
static void prepare_hbits(St *s, i64 t, i32 *u) {
    const i64 M = s->M, NM = s->NM, W = (i64)1 << M;
    const i32 *y = s->pcodes + (i64)s->pid[t] * M;
    uint32_t nn = 0;
    for (i64 j = 0; j < M; j++) nn |= (uint32_t)(y[j] >= 0) << j;
    uint64_t *top = s->hbits + M * W * NM, own[HB_MAX_NM];
    for (uint32_t K = 0; K < (uint32_t)W; K++) {
        if (K & ~nn) continue;
        for (i64 j = 0; j < M; j++) u[j] = K >> j & 1 ? y[j] : -1;
        i64 pu = pattern_find(s, u);
        if (pu >= 0 && s->ytot[pu]) value_bits(s, s->phist + pu * s->VT, own);
        else memset(own, 0, sizeof(own));
        for (i64 m = 0; m < NM; m++) top[K * NM + m] = own[m] | (K != nn ? s->dbits[t * NM + m] : 0);
    }
    for (i64 d = M - 1; d >= 0; d--) {
        const uint32_t a = (uint32_t)1 << s->order[d];
        uint64_t *h = s->hbits + d * W * NM;
        const uint64_t *below = h + W * NM;
        for (uint32_t K = 0; K < (uint32_t)W; K++) {
            if (K & ~nn) continue;
            for (i64 m = 0; m < NM; m++)
                h[K * NM + m] = below[K * NM + m] | ((nn & a) && !(K & a) ? below[(K | a) * NM + m] : 0);
        }
    }
}

/*
 * Exactness of the pruning. Γ of a leaf is computed by pair_cost; the search may skip a subtree
 * only if no leaf below can have a COMPUTED Γ below the best found (or equal with a smaller key).
 * So a bound must be a lower bound of the computed Γ, rounding included, and that rounding is
 * relative to the magnitudes of the numbers involved (the logs and the terms), not to Γ: at 10^7
 * rows the terms of eq. 10 are ~1e-6 while their sum Γ is ~1e-13 (first orders cancel). The
 * derivation, with u = 2^-53 and γ_n = n u / (1 - n u) (Higham, Accuracy and Stability, 3.1):
 *
 * (a) The log table. L[x] = log(x + α) (or + α|V_j|) from numpy, |L[x] - log(x + ..)| <= ulp(L[x])
 *     <= LOG_ULPS * 2u |L[x]| (numpy's float64 log is faithful; measured <= 0.5005 ulp on 3x10^6
 *     entries against long double, so LOG_ULPS = 1 has a factor 2 to spare).
 * (b) One attribute, value slot of eq. 10. pair_cost computes E = (a_t + a_u(n')) + g(n') with
 *     a_u(m) = p (L[N] - L[N-m]), g(m) = L[D-w-m] - L[D]; the bound is a_t + min f̃ where f̃(m) =
 *     a_u(m) + g(m) computed with the same reads and operations, and mar_term_min returns the
 *     exact minimum of f̃ over the band. For that it needs nu >= |f̃(m) - f(m)|, f the same
 *     expression on exact logarithms: nu = 2u·LOG_ULPS (p (|L[N]| + Λa) + |L[D]| + Λv) + γ_2 mag,
 *     Λ = the largest |L| the term can read (logs are monotone: the ends of the range), mag =
 *     |a_t| + max|a_u| + max|g| over the band (a_u and |g| grow with m: read at m = top). What
 *     is left is the association: (a_t + a_u) + g against a_t + (a_u + g) differ by at most
 *     γ_2 · 2 mag, the slot's allowance be. Slots ⊥ and v = y_j (pair_cost's exact operations,
 *     or 0), Γ_ham (integers) and eq. 2 (n' lphat falls with n', the term is read at n' = lo
 *     with the same operations; rounding is monotone) have be = 0.
 * (c) The sums over attributes: pair_cost adds the M terms in j order, the search adds the
 *     bounds in trie order plus a suffix; each differs from the real sum by at most
 *     γ_M Σ_d mag_d (|term| <= mag_d at level d), and the final subtraction rounds by at most
 *     u (Σ mag + Σ be): err0 = (γ_M + γ_{M+1} + 2u) Σ_d mag_d.
 * (d) The lower bound is then outer((pm + suf) - (pe + sufe + err0)) with outer = p̂(c)·x (eq.
 *     11) and eq. 12's x/h or x·h: monotone in x, and rounding to nearest is monotone, so it is
 *     <= the computed Γ of every leaf below. Every allowance is multiplied by SAFETY = 2 against
 *     the lower-order terms dropped above (products of u's).
 * Pruning then compares that bound with the best Γ found, with no absolute constant: it can never
 * change the argmin the paper's rule picks, nor a tie (ties go to the smallest key, as before).
 */
#define LOG_ULPS 1.0
#define SAFETY 2.0
static const double UNIT_ROUNDOFF = 1.1102230246251565e-16; /* u = 2^-53 */

static inline double gamma_n(double n) { return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF); }

/*
 * Eq. 10's terms of t' for one attribute, as a function of n' = N(y',c) with t' holding a
 * non-null v != y_j there: f(n') = p̂(v|c) log((N+α)/(N-n'+α)) + log((D-w-n'+α|V|)/(D+α|V|))
 * (plus a_t, which does not depend on t'). f'(n') = p̂/(N+α-n') - 1/(D-w+α|V|-n') changes sign
 * once, from - to +, so over the reals f falls up to n* = (N+α - p̂(D-w+α|V|)) / (1-p̂) and rises
 * after it. Returns min over n' in [lo, hi] of the COMPUTED f̃(n') (same table reads and
 * operations as pair_cost), found without visiting every n':
 * - n* is computed with a rounding error of at most err, so the integers floor(n* - err) ..
 *   ceil(n* + err) bracket the exact n*; they are evaluated first;
 * - |f̃(m) - f(m)| <= nu for every m (table and arithmetic rounding, see the derivation above).
 *   Walking left from the bracket, once f̃(m) >= best + 2 nu every n' further left has
 *   f̃(n') >= f(n') - nu >= f(m) - nu >= f̃(m) - 2 nu >= best (f falls towards n*); the same to
 *   the right. So the result is the exact minimum of f̃ over the band, and no rounding allowance
 *   is needed for it. In practice the walk stops after one step: f's curvature dwarfs nu.
 * Where p̂ is so close to 1 that err or the walk exceeds WALK_MAX steps, -inf (no pruning on it).
 * The bracket depends on the slot and the search (N, D, w), not on the band: mar_bracket
 * computes it once per search for every band (the slot's bracket in sta/stb). The bracket only
 * saves steps: the walk's stopping rule holds from any start (f̃ is within 2 nu of unimodal), so
 * a wrong bracket would cost walking (or -inf past WALK_MAX), never an inexact minimum.
 */
#define WALK_MAX 64
static inline void mar_bracket(double p, double nv, double alpha, i64 N, i64 D, i64 wt, double *a, double *b) {
    *a = *b = NAN; /* p̂ = 1: unused */
    if (p < 1.0) {
        double num = (double)N + alpha - p * ((double)(D - wt) + alpha * nv);
        double star = num / (1.0 - p);
        /* |computed - exact n*|: each of the ~6 operations rounds relative to its magnitude */
        double err = SAFETY * gamma_n(8.0) * ((double)N + alpha + (double)(D - wt) + alpha * nv + fabs(num))
                     / (1.0 - p);
        if (err > WALK_MAX) *a = *b = INFINITY; /* no bracket */
        else {
            *a = floor(star - err);
            *b = ceil(star + err);
        }
    }
}

/*
 * The narrow bands (counts up to NARROW, bands up to FINE_BANDS) skip all this: band_bounds
 * evaluates f̃ at each count of [lo, top], which is the same exact minimum of f̃ (tighter only
 * where mar_term_min gives up with -inf) for less work than the allowance and the bracket.
 * f̃(m) = a_u(m) + g(m) with pair_cost's operations: a_u(m) = p̂ (L[N] - L[N-m]) depends on
 * the class and value alone, not on t, and changes only when a merge suppresses that value
 * (N changes), so band_bounds keeps it per (class, slot) for m = 1..NARROW across searches: a
 * narrow band's bounds then read one or two lines per value instead of the log table at random.
 * NARROW 16 rather than 8 (band {9..16} narrow too): 10^7 rows 17.0-17.9 s against 17.5-18.7 s
 * (both with the tail, see band_partition); 32 gained nothing more.
 */
#define NARROW (1 << FINE_BANDS)

/* La: the log table from a_base (La[x] = log(x + α)), Lv from v_base[j], p = p̂(v | c). */
static inline double mar_term_min(const double *La, const double *Lv, double p, i64 N, i64 D, i64 wt, i64 lo, i64 hi,
                                  double LD, double nu, double a, double b) {
#define F(m) (p * (La[N] - La[N - (m)]) + (Lv[D - wt - (m)] - LD))
    i64 n1 = lo, n2 = lo;
    if (hi > lo && p < 1.0) {
        if (a == INFINITY) return -INFINITY;
        n1 = a <= (double)lo ? lo : a >= (double)hi ? hi : (i64)a;
        n2 = b >= (double)hi ? hi : b <= (double)lo ? lo : (i64)b;
    } /* p̂ = 1: f' >= 0 (D-w+α|V| >= N+α), smallest at lo */
    double best = INFINITY;
    for (i64 m = n1; m <= n2; m++) {
        double f = F(m);
        if (f < best) best = f;
    }
    i64 steps = 0;
    for (i64 m = n1 - 1; m >= lo; m--, steps++) {
        double f = F(m);
        if (f >= best + 2.0 * nu) break;
        if (steps >= WALK_MAX) return -INFINITY;
        if (f < best) best = f;
    }
    for (i64 m = n2 + 1; m <= hi; m++, steps++) {
        double f = F(m);
        if (f >= best + 2.0 * nu) break;
        if (steps >= 2 * WALK_MAX) return -INFINITY;
        if (f < best) best = f;
    }
#undef F
    return best;
}

/*
 * Per-slot lower bounds of the term Γ adds for trie level d when t' has value v there and
 * N(y',c) lies in [lo, hi]: 0 for v = y_j (no suppression); otherwise the term with the
 * counts that make it smallest (eq. 10: a_u grows with n', g falls with n'; eqs. 1, 2 grow
 * with n'). A value with N(v,c) < lo cannot occur in the band: +inf; so does a value no live
 * tuple of the band holds at that level (vpres = 0), which the search never meets, and the
 * per-level minimum, maximum allowance and magnitude then run over the values every leaf of the
 * band can hold, which is all (c) and (d) above need. Fills bm/bh/be, the
 * suffix sums sufm/sufh/sufe and q->err0 (the derivation above).
 */
#define LTAB_CACHED ((i64)1 << 20)
static inline __attribute__((always_inline)) void band_bounds_as(St *s, Search *q, int band, i64 lo, i64 hi,
                                                                const int cost, const int narrow) {
    /* What the slots read of St is held in locals, and mar_bracket and mar_term_min take values,
     * not St: the stores below (a_u's count, the bracket's stamp) are i64 stores the compiler
     * must assume could change any i64 field of St, which made it read them all again for every
     * slot. Compiled once per cost and kind of band (band_bounds), so no slot tests either, and
     * ⊥'s slot is made ahead of the values' loop. With pair_cost_narrow and the root's bound
     * (search_band_as): Adult k=10 loop 0.098 -> 0.094 s median of 9 fresh processes side by
     * side (helper-43's narrow and wide copies of this function gained ~2% more, as twins). */
    const double *L = s->ltab, *La = s->ltab + s->a_base;
    const i64 c = q->c, n = q->n, C = s->C, M = s->M, ventries = s->ventries, searches = s->searches;
    const i64 *voff = s->voff, *ncur = s->ncur, *eoff = s->eoff;
    const double *phat = s->phat, *lphat = s->lphat, alpha = s->alpha;
    const i32 *vpres = s->vpres ? s->vpres + (c * s->nbands + band) * ventries : NULL;
    double *sufm = s->sufm, *sufh = s->sufh, *sufe = s->sufe, *sta = s->sta, *stb = s->stb;
    i64 *ststamp = s->ststamp;
    double *au_c = s->au_n ? s->au + c * ventries * NARROW : s->au; /* a_u kept (see NARROW), or scratch */
    i64 *aun_c = s->au_n ? s->au_n + c * ventries : NULL;
    const int mar = cost == COST_MAR || cost == COST_HYBRID;
    double mag_sum = 0.0;
    double la0 = fabs(La[0]);
    if (mar && !narrow && s->ltab_bytes > LTAB_CACHED) {
        /* The log reads of eq. 10 miss the cache (the table has one entry per row): request those
         * of every slot first, so the misses overlap instead of following one another. That
         * includes g's L[D - w - top] for the magnitude: in the tail band top = N, another line for
         * every value (10^7 rows 16.0 -> 15.7 s CPU, mean of 8 runs side by side with the old code).
         * Keeping a_u at each band's ends per (class, band, slot) across searches instead, as the
         * narrow bands do (see NARROW), was slower (+0.7 s). A table of at most LTAB_CACHED bytes stays
         * in the caches, and the requests are then only work: Adult k=10 (240 KB) skips them. */
        for (i64 d = 0; d < M; d++) {
            i64 j = s->order[d], nv = voff[j + 1] - voff[j];
            const i32 *pres = vpres ? vpres + eoff[d] + 1 : NULL;
            const double *Lg = L + s->v_base[j] + s->dcur[j * C + c] - (q->y[j] >= 0 ? n : 0); /* L[D - w_j(t)] */
            const i64 *nc = ncur + voff[j] * C + c;
            for (i64 v = 0; v < nv; v++) {
                i64 N = nc[v * C];
                if ((pres && pres[v] == 0) || N < lo) continue;
                __builtin_prefetch(&La[N]);
                __builtin_prefetch(&La[N - (hi < N ? hi : N)]);
                __builtin_prefetch(&La[N - lo]);
                __builtin_prefetch(&Lg[-(hi < N ? hi : N)]);
            }
        }
    }
    for (i64 d = 0; d < M; d++) {
        const i64 j = s->order[d], nv = voff[j + 1] - voff[j];
        const i32 a = q->y[j];
        const i64 wt = a >= 0 ? n : 0;
        const i64 D = s->dcur[j * C + c];
        const double *Lv = L + s->v_base[j];
        double at = 0.0, lt = 0.0, LD = Lv[D];
        double lv = fabs(LD) > fabs(Lv[0]) ? fabs(LD) : fabs(Lv[0]); /* Λv */
        if (a >= 0) {
            i64 r = (voff[j] + a) * C + c, N = ncur[r];
            at = phat[r] * (La[N] - La[N - n]);
            lt = (double)n * lphat[r];
        }
        /* narrow band, eq. 10: g(m) at [m - 1], for every m a value's count allows; kept with a_t
           and g(0) per level for pair_cost_narrow */
        double *g = s->lg + d * NARROW;
        if (narrow && mar) {
            for (i64 m = lo; m <= hi && m <= D - wt; m++) g[m - 1] = Lv[D - wt - m] - LD;
            s->lat[d] = at;
            s->lgbot[d] = Lv[D - wt] - LD;
        }
        const i64 o = eoff[d];
        double *bm = s->bm + o, *bh = s->bh + o, *be = s->be + o;
        const i32 *pres = vpres ? vpres + o : NULL;
        const i64 *nc = ncur + voff[j] * C + c;
        const double *pc = phat + voff[j] * C + c, *lpc = lphat + voff[j] * C + c;
        double minm = 0.0, maxe = 0.0, maxmag = 0.0;
        { /* slot 0 = ⊥ */
            double fm, fh = 0.0, mag = 0.0;
            if (pres && pres[0] == 0) {
                fm = INFINITY; /* no tuple of the band has ⊥ at this level */
            } else if (a < 0) {
                fm = 0.0;
            } else { /* t' has ⊥ here: exact, w_j(t') = 0 */
                if (cost == COST_HAM) fm = (double)wt;
                else if (cost == COST_INFO) fm = -(lt + 0.0);
                else fm = (at + 0.0) + (Lv[D - wt] - LD);
                fh = (double)wt;
                mag = cost == COST_INFO ? fabs(lt) : fabs(at) + fabs(Lv[D - wt] - LD);
            }
            bm[0] = fm;
            if (cost == COST_HYBRID) bh[0] = fh;
            be[0] = 0.0;
            if (fm < minm) minm = fm;
            if (mag > maxmag) maxmag = mag;
        }
        for (i64 e = 1; e <= nv; e++) { /* slot v+1 = value v */
            const i64 v = e - 1;
            double fm, fh = 0.0, fe = 0.0, mag = 0.0;
            if (pres && pres[e] == 0) {
                fm = INFINITY; /* no tuple of the band holds v at this level */
            } else if (v == a) {
                fm = 0.0;
            } else {
                const i64 N = nc[v * C];
                if (N < lo) {
                    fm = INFINITY;
                } else if (cost == COST_HAM) {
                    fm = (double)(wt + lo);
                } else if (cost == COST_INFO) {
                    fm = -(lt + (double)lo * lpc[v * C]);
                    mag = fabs(lt) + fabs((double)(hi < N ? hi : N) * lpc[v * C]);
                } else {
                    const i64 top = hi < N ? hi : N; /* top <= N <= D - wt: g(top) is set */
                    const double p = pc[v * C];
                    fh = (double)(wt + lo);
                    if (narrow) { /* every count evaluated: f̃(m) = a_u(m) + g(m) */
                        double *au = au_c; /* a_u(m) = p̂ (log(N + α) - log(N - m + α)) at [m - 1], m <= NARROW */
                        if (aun_c) au += (o + e) * NARROW;
                        if (!aun_c || aun_c[o + e] != N) { /* kept for another N, or not kept */
                            if (aun_c) aun_c[o + e] = N;
                            for (i64 m = 1; m <= N && m <= NARROW; m++) au[m - 1] = p * (La[N] - La[N - m]);
                        }
                        double f = au[lo - 1] + g[lo - 1]; /* finite: α > 0 for eq. 10 */
                        for (i64 m = lo + 1; m <= top; m++) {
                            double fc = au[m - 1] + g[m - 1];
                            if (fc < f) f = fc;
                        }
                        fm = at + f;
                        mag = fabs(at) + au[top - 1] + fabs(g[top - 1]);
                    } else {
                        mag = fabs(at) + p * (La[N] - La[N - top]) + fabs(Lv[D - wt - top] - LD);
                        double la = fabs(La[N]) > la0 ? fabs(La[N]) : la0; /* Λa */
                        double nu = SAFETY * (2.0 * UNIT_ROUNDOFF * LOG_ULPS * (p * (fabs(La[N]) + la)
                                                                               + fabs(LD) + lv) + gamma_n(2.0) * mag);
                        const i64 so = o + e;
                        if (ststamp[so] != searches) { /* first band of this search needing the slot */
                            ststamp[so] = searches;
                            mar_bracket(p, (double)nv, alpha, N, D, wt, &sta[so], &stb[so]);
                        }
                        fm = at + mar_term_min(La, Lv, p, N, D, wt, lo, top, LD, nu, sta[so], stb[so]);
                    }
                    fe = SAFETY * 2.0 * gamma_n(2.0) * mag; /* the two association orders */
                }
            }
            bm[e] = fm;
            if (cost == COST_HYBRID) bh[e] = fh; /* read for the hybrid cost only */
            be[e] = fe;
            if (fm < minm) minm = fm;
            if (fe > maxe) maxe = fe;
            if (mag > maxmag) maxmag = mag;
        }
        sufm[d] = minm;
        sufe[d] = maxe;
        mag_sum += maxmag;
    }
    sufm[M] = 0.0;
    sufh[M] = 0.0;
    sufe[M] = 0.0;
    for (i64 d = M - 1; d >= 0; d--) {
        sufm[d] += sufm[d + 1];
        sufe[d] += sufe[d + 1];
        sufh[d] = 0.0; /* Γ_ham terms are >= 0 and 0 on a match */
    }
    double m = (double)M;
    q->err0 = cost == COST_HAM ? 0.0 /* integers: bounds and Γ_ham are exact */
              : SAFETY * (gamma_n(m) + gamma_n(m + 1.0) + 2.0 * UNIT_ROUNDOFF) * mag_sum;
    /* a leaf of a narrow band may take its exact Γ_mar from the parts made above (pair_cost_narrow) */
    q->narrow = cost == COST_MAR && narrow && aun_c != NULL;
}

static void band_bounds(St *s, Search *q, int band, i64 lo, i64 hi) {
    const int narrow = hi <= NARROW;
    switch (s->cost) {
    case COST_HAM: band_bounds_as(s, q, band, lo, hi, COST_HAM, 0); break; /* no count-dependent term */
    case COST_INFO: band_bounds_as(s, q, band, lo, hi, COST_INFO, 0); break;
    case COST_MAR:
        if (narrow) band_bounds_as(s, q, band, lo, hi, COST_MAR, 1);
        else band_bounds_as(s, q, band, lo, hi, COST_MAR, 0);
        break;
    default:
        if (narrow) band_bounds_as(s, q, band, lo, hi, COST_HYBRID, 1);
        else band_bounds_as(s, q, band, lo, hi, COST_HYBRID, 0);
    }
}

/*
 * Lower bound on the computed Γ of every leaf below a node whose partial sums are pm (main),
 * ph (Γ_ham, hybrid) and pe (allowances): (d) of the derivation above. cost is s->cost, passed
 * as a constant where the search is compiled once per cost (search_band).
 */
static inline double bound_of(int cost, double pm, double ph, double pe, double sufm, double sufe, double err0,
                              double prior) {
    double m = pm + sufm;
    if (cost == COST_HAM) return m;
    m = m - (pe + sufe + err0);
    if (cost == COST_INFO) return m;
    m = prior * m;
    if (cost == COST_MAR) return m;
    double h = ph < 1.0 ? 1.0 : ph; /* eq. 12 is increasing in Γ_mar; Γ_ham >= 1 for any merge */
    return m <= 0 ? m / h : m * h;
}

static inline double node_bound(const St *s, const Search *q, int cost, double pm, double ph, double pe,
                                i64 next_level) {
    return bound_of(cost, pm, ph, pe, s->sufm[next_level], s->sufe[next_level], q->err0, s->prior[q->c]);
}

/* Ascending bound, then ascending smallest key: among equal bounds the likely tie winner first. */
static inline int kid_before(const Kid *a, const Kid *b) {
    return a->bound < b->bound || (a->bound == b->bound && a->minkey < b->minkey);
}

static int kid_cmp_desc(const void *a, const void *b) {
    return kid_before(b, a) ? -1 : kid_before(a, b) ? 1 : 0;
}

/*
 * Children in descending bound, in place on the stack, so the depth-first search pops the
 * smallest first and meets good leaves first. (bound, minkey) differ between siblings (disjoint
 * subtrees have different smallest keys), so the order is the same whatever the sort. Up to 64
 * children an insertion sort beats qsort's callbacks: a band's root, expanded before any leaf
 * is met, sorts every value of the first level (41 on Adult) once per search. Most calls sort
 * 0-2 kids, so it is inlined and shifts one kid at a time (a fixed-size copy, no memmove call):
 * Adult k=10 0.097 -> 0.094 s.
 */
static inline void sort_kids(Kid *kids, i64 m) {
    if (m > 64) {
        qsort(kids, (size_t)m, sizeof(Kid), kid_cmp_desc);
        return;
    }
    for (i64 i = 1; i < m; i++) { /* insertion sort */
        if (!kid_before(&kids[i - 1], &kids[i])) continue;
        Kid cur = kids[i];
        i64 j = i;
        do {
            memcpy(&kids[j], &kids[j - 1], sizeof(Kid));
            j--;
        } while (j > 0 && kid_before(&kids[j - 1], &cur));
        kids[j] = cur;
    }
}

/* A subtree (bound b, smallest key minkey) can hold no leaf that beats q->best or ties and wins. */
static inline int hopeless(const Search *q, double b, i64 minkey) {
    return b > q->best || (b == q->best && minkey > q->best_key);
}

/*
 * pair_cost (COST_MAR) of t and the tuple key of a narrow band whose bounds band_bounds has just
 * made: the same terms in the same order, (a_t + a_u) + g per differing attribute, j ascending,
 * each read from what that pass computed with pair_cost's own operations on the same numbers
 * (a_t per level, a_u(n') kept per slot, g(n') and g(0) per level) instead of from the log
 * table again: a_u's slot was refreshed by the pass (the tuple's value differs from t's and
 * N(v,c) >= n' >= lo), and g(n') was filled (lo <= n' <= hi and n' <= D - w_j(t), both tuples
 * being counted in D). So the same Γ bit for bit, for ~6 table reads less per differing
 * attribute: Adult k=10 loop ~3% faster.
 */
static inline double pair_cost_narrow(const St *s, const Search *q, i64 key) {
    const i64 M = s->M, n2 = s->cnt[key];
    const i32 *y = q->y, *y2 = s->kcodes + key * M;
    const double *au_c = s->au + q->c * s->ventries * NARROW;
    double mar = 0.0;
    for (i64 j = 0; j < M; j++) {
        const i64 d = s->level[j];
        const i32 a = y[j], b = y2[d];
        if (a == b) continue; /* SUPPRESS (Alg. 2) keeps equal cells */
        double at = a >= 0 ? s->lat[d] : 0.0, au = 0.0, g = s->lgbot[d];
        if (b >= 0) {
            au = au_c[(s->eoff[d] + b + 1) * NARROW + n2 - 1];
            g = s->lg[d * NARROW + n2 - 1];
        }
        mar += (at + au) + g;
    }
    return s->prior[q->c] * mar; /* eq. 11 */
}

/* A leaf: exact Γ of the tuple key, ties to the smallest key. */
static inline void leaf(St *s, Search *q, i64 key) {
    if (key == q->t) return;
    /* The search for progress tests progress first: most leaves fail it (10^6 rows, l = 3: 302,478
     * of 66 million), and the test reads two lines where Γ reads the log table at random. The
     * same leaves are taken either way (both conditions must hold). */
    if (q->u && s->dbits && !progresses(s, q->t, key, q->u)) return;
    s->evaluations++;
    double g = q->narrow ? pair_cost_narrow(s, q, key)
                         : pair_cost_at(s, q->y, q->n, q->c, s->kcodes + key * s->M, s->level, s->cnt[key]);
    if ((g < q->best || (g == q->best && key < q->best_key)) && (!q->u || s->dbits || progresses(s, q->t, key, q->u))) {
        q->best = g;
        q->best_key = key;
    }
}

/*
 * Depth-first branch and bound over the trie of one (class, band); updates q->best. Compiled
 * once per cost (search_band below passes it as a constant): the loop over children then makes
 * only the operations and tests of its cost's bound, with no branch on the cost. The same
 * operations on the same numbers as one generic loop: the same bounds.
 */
static inline __attribute__((always_inline)) void search_band_as(St *s, Search *q, i32 root, const int cost) {
    Kid *stk = s->stk;
    /* The root with its bound (that of a node at level 0 with nothing summed yet), not -inf: a
       band whose bound is hopeless is passed over without expanding its root. Adult k=10: 12%,
       17% and 24% of the searches of the bands {5..8}, {9..16} and the tail; loop ~1.5% faster. */
    stk[0] = (Kid){.bound = node_bound(s, q, cost, 0.0, 0.0, 0.0, 0), .node = root, .minkey = s->nodes[root].minkey};
    const int prune = q->u && s->hbits; /* skip subtrees without a leaf that makes progress (prepare_hbits) */
    i64 top = 1;
    while (top > 0) {
        top--;
        i32 x = stk[top].node;
        i64 d = stk[top].depth;
        double pm = stk[top].pm, ph = stk[top].ph, pe = stk[top].pe;
        const uint32_t kept = stk[top].kept;
        if (hopeless(q, stk[top].bound, stk[top].minkey)) continue; /* best improved since the push */
        if (d == s->M) { /* a leaf */
            leaf(s, q, s->nodes[x].first);
            continue;
        }
        if (s->nodes[x].size == 1) {
            /* A chain: one tuple below, its key is minkey. The loop below would meet one child per
             * level, push it and pop it at once (q->best unchanged), so the same bounds and tests
             * are made here from the tuple's codes, without loading the chain's nodes. */
            i64 key = s->nodes[x].minkey;
            if (key == q->t) continue;
            const i32 *y2 = s->kcodes + key * s->M;
            for (; d < s->M; d++) {
                i64 e = (i64)y2[d] + 1, o = s->eoff[d];
                pm = pm + s->bm[o + e];
                ph = ph + s->bh[o + e];
                pe = pe + s->be[o + e];
                if (hopeless(q, node_bound(s, q, cost, pm, ph, pe, d + 1), key)) break;
            }
            if (d == s->M) leaf(s, q, key);
            continue;
        }
        const double *bm = s->bm + s->eoff[d], *bh = s->bh + s->eoff[d], *be = s->be + s->eoff[d];
        /* the loop writes kids only: what it reads of s and q is loaded once (the compiler must
           assume a kid's doubles could alias them) */
        const double sufm = s->sufm[d + 1], sufe = s->sufe[d + 1], err0 = q->err0, prior = s->prior[q->c];
        const Search near = {.best = q->best};
        const Node *nodes = s->nodes;
        const int inner = d + 1 < s->M;
        /* Every child is written straight onto the stack and kept (m advanced) unless its bound
           exceeds the best, a test without branches: a child's fate is hard to predict (3 in 4
           fall), a mispredicted branch cost more than the stores. The kids are then sorted in
           place: no copy from a scratch list. Adult k=10 0.105 -> 0.099 s. A child whose bound
           only ties the best is kept even where its smallest key loses the tie (hopeless() would
           drop it): the pop's hopeless() test drops it then, and such exact ties are rare, where
           the full test cost 8 instructions per child. With ph written for the hybrid cost only:
           Adult k=10 ~2% faster. */
        Kid *kids = stk + top;
        i64 m = 0;
        const i64 attr = s->order[d];
        const i32 ya = q->y[attr];
        const uint64_t *hb = prune ? s->hbits + ((d + 1) << s->M) * s->NM : NULL;
        for (i32 ch = nodes[x].first; ch >= 0; ch = nodes[ch].next) {
            const Node *nd = &nodes[ch];
            i64 e = (i64)nd->val + 1;
            double cm = pm + bm[e], chh = cost == COST_HYBRID ? ph + bh[e] : 0.0, ce = pe + be[e];
            double b = bound_of(cost, cm, chh, ce, sufm, sufe, err0, prior);
            Kid *kid = &kids[m];
            kid->node = ch;
            kid->minkey = nd->minkey;
            kid->bound = b;
            kid->pm = cm;
            if (cost == COST_HYBRID) kid->ph = chh; /* read for the hybrid cost only */
            kid->pe = ce;
            kid->depth = (i32)d + 1;
            int keep = !(b > near.best);
            if (prune && keep) {
                const uint32_t km = kept | (uint32_t)(ya >= 0 && nd->val == ya) << attr;
                const uint64_t *hk = hb + (i64)km * s->NM, *nb = s->nbits + (i64)ch * s->NM;
                kid->kept = km;
                for (i64 mo = 0; mo < s->NM; mo++)
                    keep &= (double)__builtin_popcountll(hk[mo] | nb[mo]) >= s->m_thr[mo];
            }
            m += keep;
        }
        if (inner) /* expanded soon: a chain reads its tuple's codes, a node its children;
                      both ends, as a tuple's codes or a node may straddle two cache lines */
            for (i64 i = 0; i < m; i++) {
                const Node *nd = &nodes[kids[i].node];
                if (nd->size == 1) {
                    __builtin_prefetch(&s->kcodes[(i64)nd->minkey * s->M]);
                    __builtin_prefetch(&s->kcodes[(i64)nd->minkey * s->M + s->M - 1]);
                } else {
                    __builtin_prefetch(&nodes[nd->first]);
                    __builtin_prefetch(&nodes[nd->first].size);
                    if (prune) __builtin_prefetch(&s->nbits[(i64)nd->first * s->NM]); /* siblings: adjacent */
                }
            }
        if (q->u && s->dbits) /* a leaf of the search for progress reads its tuple's value bits too */
            for (i64 i = 0; i < m; i++) {
                const Node *nd = &nodes[kids[i].node];
                if (nd->size == 1) __builtin_prefetch(&s->dbits[(i64)nd->minkey * s->NM]);
            }
        sort_kids(kids, m);
        top += m;
    }
}

static void search_band(St *s, Search *q, i32 root) {
    switch (s->cost) {
    case COST_HAM: search_band_as(s, q, root, COST_HAM); break;
    case COST_INFO: search_band_as(s, q, root, COST_INFO); break;
    case COST_MAR: search_band_as(s, q, root, COST_MAR); break;
    default: search_band_as(s, q, root, COST_HYBRID); break;
    }
}

/*
 * Every leaf of the trie root, evaluated exactly. For a band of pop tuples this reads pop x M
 * cells, where band_bounds walks every value slot (sum_j |V_j| + 1, one closed-form minimum per
 * value present) before the search even starts: best_partner scans a band when pop x M is at
 * most that many slots. The result is the same as search_band's: that search is exact (it never
 * skips a leaf that could beat or tie the best), so both leave q->best at the smallest computed
 * Γ of the band and the best before, ties to the smallest key.
 */
static void scan_band(St *s, Search *q, i32 root) {
    i64 top = 0;
    Kid *stk = s->stk;
    stk[top].node = root;
    stk[top++].depth = 0;
    while (top > 0) {
        top--;
        i32 x = stk[top].node;
        i64 d = stk[top].depth;
        if (d == s->M) leaf(s, q, s->nodes[x].first);
        else if (s->nodes[x].size == 1) leaf(s, q, s->nodes[x].minkey);
        else
            for (i32 ch = s->nodes[x].first; ch >= 0; ch = s->nodes[ch].next) {
                stk[top].node = ch;
                stk[top++].depth = (i32)d + 1;
            }
    }
}

/*
 * A first upper bound for t's search: a tuple near t in t's own trie, found from t's path alone.
 * Leave the path at its deepest node with another tuple below, take one other child there and
 * follow t's codes below it as far as they go: the leaf reached shares t's codes down to that
 * level and as many as the trie allows below. Any live tuple of t's class other than t would do
 * (see best_partner); this one is cheap (t's nodes are known: no sibling list of the upper levels
 * is scanned) and often close, the final t* in 5% of the searches at 10^7 rows. Taken from t's
 * band alone: a walk down t's codes in band {1} too (where 51% of the t* lie) popped fewer nodes
 * (107M, with t's band searched first) but cost as much time as it saved. -1 if t is alone in
 * its band.
 */
static i64 near_in_own_band(const St *s, const Search *q) {
    const i64 M = s->M;
    const i32 *path = s->path + q->t * M, *y = s->kcodes + q->t * M;
    for (i64 d = 0; d < M - 1; d++) __builtin_prefetch(&s->nodes[path[d]]);
    i64 d = M - 2;
    while (d >= 0 && s->nodes[path[d]].size < 2) d--;
    i32 x = d >= 0 ? path[d] : s->roots[q->c * NBANDS + band_of(s, q->n)];
    if (s->nodes[x].size < 2) return -1;
    i32 ch = s->nodes[x].first; /* a child without t: t lies below path[d + 1] alone */
    if (ch == path[d + 1]) ch = s->nodes[ch].next;
    for (d += 2; d < M && s->nodes[ch].size > 1; d++) {
        i32 g = s->nodes[ch].first;
        while (g >= 0 && s->nodes[g].val != y[d]) g = s->nodes[g].next;
        ch = g >= 0 ? g : s->nodes[ch].first;
    }
    return s->nodes[ch].minkey;
}

/*
 * t* for t: the tuple of t's class minimising Γ(t, ·) over S minus t, or -1 if none.
 * The search starts from the exact Γ of near_in_own_band's tuple, so the pruning bites from the
 * first band on. That changes no result: every band is searched exactly (no leaf that could beat
 * or tie the best is skipped, and a tie goes to the smaller key whichever leaf comes first), so
 * the answer is the smallest (Γ, key) over the class from any start that is itself the (Γ, key) of
 * a tuple of the class. 10^7 rows (794,022 tuples): trie nodes popped 164M -> 131M (a search
 * started from its final best would pop 68M), loop CPU time 16.7-17.1 s -> 16.3-16.9 s in 3
 * alternating pairs (faster in 7 of 8 pairs over the day; the machine was shared); 10^8 rows
 * (2,736,776 tuples) 79.5 -> 73.7 s. The time falls less than the nodes because most of it goes
 * into reading the children of expanded nodes, and every band's root is expanded whatever the
 * start (root children: ~150M reads per run at 10^7, ~83% of them pruned). With 2 classes the
 * roots' children stay in cache, though: indexing them by value slot and skipping a slot on its
 * bound before reading the child made 10^7 rows slower (0.1-2.2 s: the branch mispredicts).
 */
static i64 best_partner(St *s, i64 t, double *gamma, i32 *progress_u) {
    Search q;
    q.u = progress_u;
    q.t = t;
    q.c = s->cls[t];
    q.n = s->cnt[t];
    q.y = s->pcodes + (i64)s->pid[t] * s->M;
    q.best = INFINITY;
    q.best_key = -1;
    q.err0 = 0.0;
    q.narrow = 0;
    s->searches++;
    if (progress_u && s->hbits) prepare_hbits(s, t, progress_u + s->M); /* its own scratch: u's second half */
    i64 near = near_in_own_band(s, &q);
    if (near >= 0) leaf(s, &q, near);
    for (int b = 0; b < NBANDS; b++) {
        i64 pop = s->band_pop[q.c * NBANDS + b];
        if (pop == 0 || (pop == 1 && band_of(s, q.n) == b)) continue;
        if (pop * s->M <= s->ventries) {
            scan_band(s, &q, s->roots[q.c * NBANDS + b]);
            continue;
        }
        i64 lo, hi;
        band_range(s, b, &lo, &hi);
        band_bounds(s, &q, b, lo, hi);
        search_band(s, &q, s->roots[q.c * NBANDS + b]);
        q.narrow = 0; /* what pair_cost_narrow reads is this band's */
    }
    *gamma = q.best;
    return q.best_key;
}
/* ---------- models: the cheapest merge that makes progress (issue 32) ------------------- */

/*
 * Does merging t with t' leave a class u that meets every model? As reference.progressing: the
 * histogram of u now, plus t's and t''s where they move into u. `u` is scratch (M codes).
 *
 * u keeps t's codes where t and t' agree, so within one search (t fixed, no histogram changes)
 * the class u and whether t moves into it depend only on the mask of kept non-null attributes:
 * that part of the histogram is kept per mask (pc_*), so a leaf pays t''s histogram and the
 * models, not a hash lookup of u and its histogram. The same integers are summed either way
 * (u's + t's + t''s), so the same answer. With l = 3 at 10^6 rows most leaves of the second search
 * do not progress: this was 58% of the loop's time (perf), spent in the pattern lookup.
 */
#define PCACHE 256
static int progresses(St *s, i64 t, i64 t2, i32 *u) {
    const i64 M = s->M, VT = s->VT;
    const i32 *y = s->pcodes + (i64)s->pid[t] * M, *y2 = s->kcodes + t2 * M; /* y2 in trie order */
    uint64_t kept = 0;
    int t_moves = 0, t2_moves = 0;
    for (i64 j = 0; j < M; j++) {
        const i32 a = y[j], b = y2[s->level[j]];
        if (a == b) {
            if (a >= 0 && j < 64) kept |= (uint64_t)1 << j;
        } else {
            t_moves |= a >= 0;
            t2_moves |= b >= 0;
        }
    }
    i64 *h = s->scratch, *base = NULL;
    uint64_t slot = 0;
    if (s->pc_hist) {
        slot = ((kept * 0x9E3779B97F4A7C15ull) >> 56) & (PCACHE - 1);
        if (s->pc_stamp[slot] == s->searches && s->pc_mask[slot] == kept) base = s->pc_hist + slot * (VT + s->NM);
    }
    if (!base) {
        for (i64 j = 0; j < M; j++) u[j] = y[j] == y2[s->level[j]] ? y[j] : -1; /* SUPPRESS (Alg. 2) */
        i64 pu = pattern_find(s, u);
        base = s->pc_hist ? s->pc_hist + slot * (VT + s->NM) : s->scratch + 2 * VT;
        for (i64 v = 0; v < VT; v++) {
            i64 x = pu >= 0 && s->ytot[pu] ? s->phist[pu * VT + v] : 0;
            if (t_moves) x += s->shist[t * VT + v];
            base[v] = x;
        }
        if (s->pc_hist) {
            s->pc_stamp[slot] = s->searches;
            s->pc_mask[slot] = kept;
            if (s->dbits) value_bits(s, base, (uint64_t *)(base + VT)); /* an entry: histogram, then its bits */
        }
    }
    if (s->dbits) { /* distinct only: the values of u + t (the entry's bits) or t' */
        const uint64_t *ub = (const uint64_t *)(base + VT), *tb = s->dbits + t2 * s->NM;
        for (i64 m = 0; m < s->NM; m++) {
            uint64_t b = ub[m] | (t2_moves ? tb[m] : 0);
            if (!((double)__builtin_popcountll(b) >= s->m_thr[m])) return 0;
        }
        return 1;
    }
    const i64 *h2 = s->shist + t2 * VT;
    for (i64 v = 0; v < VT; v++) h[v] = base[v] + (t2_moves ? h2[v] : 0);
    return models_hold(s, h);
}

/* ---------- ANONYMIZE (Algorithm 1) ------------------------------------------------------ */

static int all_null(const i32 *y, i64 M) {
    for (i64 j = 0; j < M; j++) if (y[j] >= 0) return 0;
    return 1;
}

/*
 * Lines 5-7 of Algorithm 1 for the violating tuple t; Γ goes to *gamma. Returns 0 for a merge,
 * 1 and 2 for the corner cases of anonymize() (t alone in its class; t = (⊥..⊥, c) alone in
 * its class), -1 if an invariant broke.
 */
static int step(St *s, i64 t, i32 *u, const i32 *unull, double *gamma) {
    const i64 M = s->M, c = s->cls[t];
    const i32 *y = s->pcodes + (i64)s->pid[t] * M;
    i64 keys[3];
    if (s->class_alive[c] >= 2) {
        i64 partner = best_partner(s, t, gamma, NULL);
        if (partner < 0) return -1;
        if (s->NM && !progresses(s, t, partner, u)) {
            /* the cheapest merge leaves a class failing a model: the cheapest that does not, if any
             * (the same pruned search, leaves counted only where the merge makes progress) */
            double g;
            i64 better = best_partner(s, t, &g, u);
            if (better >= 0) {
                partner = better;
                *gamma = g;
            }
        }
        const i32 *y2 = s->pcodes + (i64)s->pid[partner] * M;
        for (i64 j = 0; j < M; j++) u[j] = y[j] == y2[j] ? y[j] : -1; /* SUPPRESS (Alg. 2) */
        keys[0] = t;
        keys[1] = partner;
        return replace(s, keys, 2, u, c);
    }
    if (!all_null(y, M)) { /* t alone in its class: (⊥..⊥, c), Γ against an empty all-⊥ tuple */
        *gamma = pair_cost(s, y, s->cnt[t], c, unull, 0);
        keys[0] = t;
        return replace(s, keys, 1, unull, c) < 0 ? -1 : 1;
    }
    /* (⊥..⊥, c) alone in its class: fully suppress the cheapest tuple of another class */
    i64 victim = -1;
    for (i64 o = 0; o < s->T; o++) {
        if (!s->alive[o] || s->cls[o] == c) continue;
        const i32 *yo = s->pcodes + (i64)s->pid[o] * M;
        if (all_null(yo, M)) continue;
        double go = pair_cost(s, yo, s->cnt[o], s->cls[o], unull, 0);
        if (victim < 0 || go < *gamma) { /* ties: the smallest key */
            *gamma = go;
            victim = o;
        }
    }
    if (victim < 0) return -1;
    keys[0] = victim;
    return replace(s, keys, 1, unull, s->cls[victim]) < 0 ? -1 : 2;
}

/*
 * At scale the search is bound by memory latency at random addresses in blocks of up to
 * hundreds of MB (trie nodes, tuple codes): with 4 KB pages nearly every such read also misses
 * the TLB. Where the kernel backs only advised memory with 2 MB pages (Linux, transparent huge
 * pages = madvise), the 2 MB-aligned interior of every block of 4 MB or more is advised. Only a
 * hint: the block stays PyMem_Calloc's, the contents and results are the same either way.
 */
static void huge_pages(void *ptr, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t page = (uintptr_t)1 << 21;
    uintptr_t a = ((uintptr_t)ptr + page - 1) & ~(page - 1), b = ((uintptr_t)ptr + bytes) & ~(page - 1);
    if (bytes >= 2 * page && b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)ptr;
    (void)bytes;
#endif
}

#define ALLOC(ptr, count)                                                                  \
    do {                                                                                   \
        if (!((ptr) = PyMem_Calloc((size_t)(count) + 1, sizeof(*(ptr))))) {                \
            PyErr_NoMemory();                                                              \
            goto done;                                                                     \
        }                                                                                  \
        huge_pages((ptr), ((size_t)(count) + 1) * sizeof(*(ptr)));                         \
    } while (0)

static PyObject *run(PyObject *self, PyObject *args) {
    Py_buffer b_codes = {0}, b_cls = {0}, b_cnt = {0}, b_voff = {0}, b_ncur = {0}, b_phat = {0}, b_lphat = {0},
              b_prior = {0}, b_ltab = {0}, b_vbase = {0}, b_order = {0}, b_draws = {0}, b_final = {0}, b_gammas = {0},
              b_shist = {0}, b_mkind = {0}, b_moff = {0}, b_mwidth = {0}, b_mthr = {0}, b_mspan = {0}, b_share = {0},
              b_clog = {0};
    i64 T, M, C, k, a_base, NM, VT;
    int cost;
    double alpha;
    PyObject *progress, *result = NULL;
    St s;
    memset(&s, 0, sizeof(s));
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*y*y*y*y*Ly*y*y*LLLLidw*w*OLLw*y*y*y*y*y*y*y*", &b_codes, &b_cls, &b_cnt,
                          &b_voff, &b_ncur, &b_phat, &b_lphat, &b_prior, &b_ltab, &a_base, &b_vbase, &b_order, &b_draws,
                          &T, &M, &C, &k, &cost, &alpha, &b_final, &b_gammas, &progress, &NM, &VT, &b_shist, &b_mkind,
                          &b_moff, &b_mwidth, &b_mthr, &b_mspan, &b_share, &b_clog))
        return NULL;
    const i32 *codes = b_codes.buf;
    const double *draws = b_draws.buf;
    i32 *final = b_final.buf;
    double *gammas = b_gammas.buf;
    i64 max_steps = b_draws.len / (Py_ssize_t)sizeof(double);
    i64 iterations = 0, solo = 0, cross = 0, groups = 0;
    i32 *unull = NULL, *u = NULL;

    if (T < 1 || M < 1 || C < 1 || T * M + C * NBANDS + 16 >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "anonsql.kanon._core: count table empty or too large (T x M >= 2^31)");
        goto done;
    }
    /* Byte sizes of every buffer (kanon.fast.kernel checks dtypes and shapes before this): a
     * wrong size is refused here too, so no call can read or write past a buffer's end. */
#define NEED(buf, n)                                                                                    \
    if ((buf).len != (Py_ssize_t)(n)) {                                                                 \
        PyErr_Format(PyExc_ValueError, "anonsql.kanon._core: buffer %s has %zd bytes, expected %lld",   \
                     #buf, (buf).len, (long long)(n));                                                   \
        goto done;                                                                                      \
    }
    NEED(b_codes, T * M * 4) NEED(b_cls, T * 8) NEED(b_cnt, T * 8) NEED(b_voff, (M + 1) * 8)
    NEED(b_prior, C * 8) NEED(b_vbase, M * 8) NEED(b_order, M * 8) NEED(b_final, T * M * 4)
    NEED(b_gammas, b_draws.len)
    if (NM < 0 || VT < 0 || (NM > 0) != (VT > 0)) {
        PyErr_SetString(PyExc_ValueError, "anonsql.kanon._core: models without histogram slots, or the reverse");
        goto done;
    }
    NEED(b_shist, T * VT * 8) NEED(b_mkind, NM * 8) NEED(b_moff, NM * 8) NEED(b_mwidth, NM * 8)
    NEED(b_mthr, NM * 8) NEED(b_mspan, NM * 8) NEED(b_share, VT * 8)
    for (i64 m = 0; m < NM; m++) {
        const i64 off = ((const i64 *)b_moff.buf)[m], w = ((const i64 *)b_mwidth.buf)[m];
        const i64 kind = ((const i64 *)b_mkind.buf)[m];
        if (off < 0 || w < 1 || off + w > VT || kind < MODEL_DISTINCT || kind > MODEL_T_ORDERED) {
            PyErr_SetString(PyExc_ValueError, "anonsql.kanon._core: a model's slots or kind out of range");
            goto done;
        }
    }
    {
        const i64 nval = ((const i64 *)b_voff.buf)[M] * C;
        NEED(b_ncur, nval * 8) NEED(b_phat, nval * 8) NEED(b_lphat, nval * 8)
    }
#undef NEED
    if (cost < COST_HAM || cost > COST_HYBRID || b_draws.len % (Py_ssize_t)sizeof(double) || b_ltab.len % 8) {
        PyErr_SetString(PyExc_ValueError, "anonsql.kanon._core: unknown cost id or ragged float buffer");
        goto done;
    }
    s.T = T; s.M = M; s.C = C; s.k = k; s.cost = cost; s.alpha = alpha;
    s.voff = b_voff.buf; s.ncur = b_ncur.buf; s.phat = b_phat.buf; s.lphat = b_lphat.buf;
    s.prior = b_prior.buf; s.ltab = b_ltab.buf; s.ltab_bytes = b_ltab.len; s.a_base = a_base; s.v_base = b_vbase.buf;
    s.order = b_order.buf;
    s.cls = b_cls.buf;
    s.NM = NM; s.VT = VT; s.shist = b_shist.buf; s.m_kind = b_mkind.buf; s.m_off = b_moff.buf;
    s.m_width = b_mwidth.buf; s.m_thr = b_mthr.buf; s.m_span = b_mspan.buf; s.share = b_share.buf; s.clog = b_clog.buf;

    ALLOC(s.dcur, M * C);
    for (i64 j = 0; j < M; j++)
        for (i64 v = s.voff[j]; v < s.voff[j + 1]; v++)
            for (i64 c = 0; c < C; c++) s.dcur[j * C + c] += s.ncur[v * C + c];
    ALLOC(s.pid, T); ALLOC(s.cnt, T); ALLOC(s.alive, T); ALLOC(s.parent, T);
    ALLOC(s.pnext, T); ALLOC(s.pprev, T); ALLOC(s.kcodes, T * M); ALLOC(s.path, T * M);
    s.pcap = T + max_steps + 1; /* each step makes at most one new pattern */
    ALLOC(s.pcodes, s.pcap * M); ALLOC(s.ytot, s.pcap); ALLOC(s.phead, s.pcap);
    ALLOC(s.phist, s.pcap * VT); ALLOC(s.scratch, 3 * VT);
    if (NM && M <= 64 && VT <= 4096) { /* progresses' cache: at most 8 MB */
        ALLOC(s.pc_hist, PCACHE * (VT + NM)); ALLOC(s.pc_mask, PCACHE); ALLOC(s.pc_stamp, PCACHE);
        for (i64 i = 0; i < PCACHE; i++) s.pc_stamp[i] = -1;
        int distinct = 1;
        for (i64 m = 0; m < NM; m++) distinct &= s.m_kind[m] == MODEL_DISTINCT && s.m_width[m] <= 64;
        if (distinct) {
            ALLOC(s.dbits, T * NM);
            for (i64 key = 0; key < T; key++) value_bits(&s, s.shist + key * VT, s.dbits + key * NM);
            if (M <= HB_MAX_M && NM <= HB_MAX_NM) {
                ALLOC(s.hbits, (M + 1) * ((i64)1 << M) * NM);
                ALLOC(s.nbits, (T * M + C * NBANDS + 16) * NM); /* s.ncap, set below */
            }
        }
    }
    uint64_t hcap = 1;
    while (hcap < (uint64_t)(2 * s.pcap)) hcap <<= 1;
    s.hmask = hcap - 1;
    ALLOC(s.htab, hcap);
    memset(s.htab, 0xff, sizeof(i32) * hcap);
    ALLOC(s.fen, T + 1); ALLOC(s.viol, T);
    s.fstep = 1;
    while (s.fstep * 2 <= T) s.fstep *= 2;
    ALLOC(s.class_alive, C); ALLOC(s.roots, C * NBANDS); ALLOC(s.band_pop, C * NBANDS);
    for (i64 i = 0; i < C * NBANDS; i++) s.roots[i] = -1;
    s.ncap = T * M + C * NBANDS + 16; /* live tuples x levels + roots; freed nodes are reused */
    ALLOC(s.nodes, s.ncap);
    s.nfree = -1;
    ALLOC(s.eoff, M + 1);
    ALLOC(s.level, M);
    for (i64 d = 0; d < M; d++) s.level[s.order[d]] = d;
    i64 maxv = 0;
    for (i64 d = 0; d < M; d++) {
        i64 nv = s.voff[s.order[d] + 1] - s.voff[s.order[d]];
        s.eoff[d + 1] = s.eoff[d] + nv + 1;
        if (nv > maxv) maxv = nv;
    }
    s.ventries = s.eoff[M];
    {
        i64 rows = 0;
        for (i64 key = 0; key < T; key++) { /* a merged count is a sum of input counts */
            i64 n = ((const i64 *)b_cnt.buf)[key];
            rows += n > 0 ? n : 0;
        }
        s.nbands = doubling(rows) + 1;
        if (NM && b_clog.len < (Py_ssize_t)((rows + 1) * 8)) {
            PyErr_SetString(PyExc_ValueError, "anonsql.kanon._core: the count logarithms end before N");
            goto done;
        }
    }
    /* Value presence pays where C x bands x values is small next to the tries (T x M nodes of 28
     * bytes); many classes times a near-unique QI would make it the largest block: then it is off. */
    if (C * s.nbands * s.ventries <= 7 * T * M + ((i64)1 << 20)) ALLOC(s.vpres, C * s.nbands * s.ventries);
    ALLOC(s.bm, s.ventries); ALLOC(s.bh, s.ventries); ALLOC(s.be, s.ventries);
    ALLOC(s.sta, s.ventries); ALLOC(s.stb, s.ventries); ALLOC(s.ststamp, s.ventries);
    /* a_u kept across searches where that stays small next to the tries; else recomputed (scratch) */
    if (cost == COST_MAR || cost == COST_HYBRID) {
        if (C * s.ventries * (NARROW + 1) <= 2 * T * M + ((i64)1 << 17)) {
            ALLOC(s.au, C * s.ventries * NARROW);
            ALLOC(s.au_n, C * s.ventries);
        } else {
            ALLOC(s.au, NARROW);
        }
    }
    ALLOC(s.sufm, M + 1); ALLOC(s.sufh, M + 1); ALLOC(s.sufe, M + 1);
    s.stk_cap = (M + 1) * (maxv + 2) + 1; /* DFS keeps at most one sibling list per level, plus
                                             the list being written (a kid per child) */
    ALLOC(s.stk, s.stk_cap);
    ALLOC(s.lat, M); ALLOC(s.lgbot, M); ALLOC(s.lg, M * NARROW);
    ALLOC(unull, M); ALLOC(u, 2 * M);
    for (i64 j = 0; j < M; j++) unull[j] = -1;

    for (i64 key = 0; key < T; key++) {
        i64 p = pattern_id(&s, codes + key * M);
        if (p < 0 || tuple_add(&s, key, p, ((const i64 *)b_cnt.buf)[key], 0) < 0) goto internal;
    }
    ALLOC(s.sorted, T);
    ALLOC(s.radix_tmp, T);
    {
        i64 buckets = maxv + 1; /* the most digit values of a radix_pass: codes + ⊥, bands, classes */
        if (s.nbands > buckets) buckets = s.nbands;
        if (C > buckets) buckets = C;
        ALLOC(s.radix_count, buckets + 1);
    }
    if (trie_layout(&s) < 0) goto internal;
    for (i64 p = 0; p < s.npat; p++) refresh(&s, p);

    /* The loop touches no Python object but `progress`: other threads may run meanwhile. */
    int failed = 0; /* 1: broken invariant, 2: progress raised */
    Py_BEGIN_ALLOW_THREADS
    while (s.nviol > 0) {
        if (iterations >= max_steps) { failed = 1; break; } /* cannot happen, see anonymize() */
        if (progress != Py_None && iterations % PROGRESS_EVERY == 0) {
            Py_BLOCK_THREADS
            PyObject *ret = PyObject_CallFunction(progress, "LL", (long long)iterations, (long long)s.nviol);
            Py_XDECREF(ret);
            Py_UNBLOCK_THREADS
            if (!ret) { failed = 2; break; }
        }
        /* line 4 of Algorithm 1: the violating tuple of rank floor(u * n_violating) by key */
        i64 rank = (i64)(draws[iterations] * (double)s.nviol);
        if (rank > s.nviol - 1) rank = s.nviol - 1;
        int kind = step(&s, fen_find(&s, rank), u, unull, &gammas[iterations]);
        if (kind < 0 || (s.inserted * RELAYOUT >= s.laid_out && trie_layout(&s) < 0)) { failed = 1; break; }
        solo += kind == 1;
        cross += kind == 2;
        iterations++;
    }
    Py_END_ALLOW_THREADS
    if (failed == 1) goto internal;
    if (failed == 2) goto done;

    for (i64 key = 0; key < T; key++) { /* parents have smaller keys: one pass resolves */
        i64 root = s.parent[key] == key ? key : s.parent[s.parent[key]];
        s.parent[key] = (i32)root;
        memcpy(final + key * M, s.pcodes + (i64)s.pid[root] * M, sizeof(i32) * M);
        groups += s.alive[key];
    }
    result = Py_BuildValue("LLLLL", (long long)iterations, (long long)solo, (long long)cross, (long long)groups,
                           (long long)s.evaluations);
    goto done;
internal:
    PyErr_SetString(PyExc_RuntimeError, "anonsql.kanon._core: internal invariant violated");
done:
    {
        void *blocks[] = {s.dcur, s.pid, s.cnt, s.alive, s.parent, s.path, s.pnext, s.pprev, s.kcodes, s.pcodes, s.ytot,
                          s.phead, s.htab, s.fen, s.viol, s.class_alive, s.roots, s.band_pop, s.nodes, s.eoff, s.level,
                          s.bm, s.bh, s.be, s.sta, s.stb, s.ststamp, s.au, s.au_n, s.sufm, s.sufh, s.sufe, s.stk,
                          s.lat, s.lgbot, s.lg, unull, u, s.sorted, s.radix_tmp, s.radix_count, s.vpres, s.phist,
                          s.scratch, s.pc_hist, s.pc_mask, s.pc_stamp, s.dbits, s.nbits, s.hbits};
        for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) PyMem_Free(blocks[i]);
    }
    Py_buffer *bufs[] = {&b_codes, &b_cls, &b_cnt, &b_voff, &b_ncur, &b_phat, &b_lphat, &b_prior,
                         &b_ltab, &b_vbase, &b_order, &b_draws, &b_final, &b_gammas, &b_shist, &b_mkind, &b_moff,
                         &b_mwidth, &b_mthr, &b_mspan, &b_share, &b_clog};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) PyBuffer_Release(bufs[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "ANONYMIZE (Kameya & Hayashi 2016, Alg. 1-3) on prepared arrays; see kanon.fast."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", "Compiled loop of anonsql.kanon.", -1, methods};

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&module); }
