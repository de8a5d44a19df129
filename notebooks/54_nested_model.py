# %% [markdown]
# # The nested households model: parameters, households and the five summary probabilities
#
# * **For:** the two-level latent class model of people nested in households (Supp. Sec. 1.1, eq. (1)), the five household summaries of Supp. Table 3, and their probabilities in closed form (Supp. eq. (2)), which notebook 55's release and sampler use.
# * **You need:** nothing but the model's parameters (`NestedParams`); households are simulated from it.
# * **You get:** `dplit.nested_model`: `NestedParams`, `simulate_households`, `household_summaries`, `summary_counts`, `summary_probs` and the brute-force `household_probs`/`household_table`, each checked here; `dplit.nested` re-exports them all.
#
# Nixon, Barrientos, Reiter and Slavković (seed 004), Supplement Sec. 1: the model of Hu et al. (2018), truncated
# at $G$ household-level and $M$ individual-level classes. Notebook `55_nested` releases the summaries
# and fits the model to them.

# %%
#| default_exp nested_model
#| internal PARAM_NAMES SUMMARY_TEXT row_lengths unpack check_households summary_probs_kernel
#| internal summary_probs_paper

# %% [markdown]
# ## Parameters
#
# The checks here use fixed small cases and one seeded generator; nothing depends on the size switch.

# %%
import numpy as np

SEED = 20261127
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## Households, variables and the nested model (Supp. Sec. 1.1, eq. (1))
#
# A household of size three is a head and two other members. The supplement's variables, with our codes
# (counted from 0; the level each summary asks about is level 0):
#
# | column | variable | levels |
# |---|---|---|
# | `own` ($X_0$) | ownership | 0 owned (or being bought), 1 rented |
# | `hh_gender` ($X_1$) | gender of the head | 0, 1 |
# | `hh_race` ($X_2$) | race of the head | $R$ levels, 0 = white |
# | `gender`, `race`, `rel` of member $i$ ($X_{i1}, X_{i2}, X_{i3}$) | gender, race, relationship to the head | 2, $R$, $K$ levels; `rel` 0 = spouse |
#
# A data set is an integer array with one row per household and the columns
# `own, hh_gender, hh_race, gender_1, race_1, rel_1, gender_2, race_2, rel_2` (the supplement's
# $\mathbf X = (X_0, X_1, X_2, X_{11}, X_{12}, X_{13}, X_{21}, X_{22}, X_{23})$); a household of size $h$ has
# $3 + 3(h - 1)$ columns. The head's own variables count as household-level, as in the supplement.
#
# The model (eq. (1)): a household belongs to a household-level class $g$ with probability $\pi_g$; given $g$, its
# household-level variables are independent with probabilities $\lambda^{(0)}_g, \lambda^{(1)}_g, \lambda^{(2)}_g$, and
# each other member independently belongs to an individual-level class $m$ with probability $w_{gm}$ and has
# independent variables with probabilities $\phi^{(1)}_{gm}, \phi^{(2)}_{gm}, \phi^{(3)}_{gm}$:
#
# $$P(\mathbf X = \mathbf x \mid \theta) = \sum_g \pi_g\, \lambda^{(0)}_{g x_0} \lambda^{(1)}_{g x_1} \lambda^{(2)}_{g x_2}
#   \prod_{i=1}^{h-1} \Big(\sum_m w_{gm}\, \phi^{(1)}_{gm x_{i1}} \phi^{(2)}_{gm x_{i2}} \phi^{(3)}_{gm x_{i3}}\Big).$$
#
# The supplement truncates both levels at two classes ($G = M = 2$); any $G, M \ge 1$ work here. (The supplement's
# eq. (2) and Table 2 call the ownership probabilities $\lambda^{(1)}$ and the head's race $\lambda^{(2)}$, while
# eq. (1) numbers ownership $X_0$; we follow eq. (1).) `NestedParams` holds $\theta$ under the names
# `pi` $(G)$, `lam_own`, `lam_gender` $(G, 2)$, `lam_race` $(G, R)$, `w` $(G, M)$, `phi_gender` $(G, M, 2)$,
# `phi_race` $(G, M, R)$, `phi_rel` $(G, M, K)$, each a probability vector along its last axis, and refuses
# anything else, naming the argument.

# %%
#| export
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from dplit import _validate as V

PARAM_NAMES = ("pi", "lam_own", "lam_gender", "lam_race", "w", "phi_gender", "phi_race", "phi_rel")
SUMMARIES = ("S1", "S2", "S3", "S4", "S5")
SUMMARY_TEXT = ("all members white", "owned by the head", "all members of the same race", "spouse present",
                "same-race couple present")


def _simplex(value, name, shape, spec, minimum=1):
    """A float array of ``shape`` (None: any length >= minimum) holding probability vectors along its last axis."""
    arr = V.finite_array(value, name)
    if arr.ndim != len(shape) or any(s is not None and a != s for a, s in zip(arr.shape, shape)) \
            or any(s is None and a < minimum for a, s in zip(arr.shape, shape)) or arr.size == 0:
        raise ValueError(f"{name} must have shape {spec}, got {arr.shape}")
    if np.any(arr < 0) or not np.allclose(arr.sum(axis=-1), 1.0, rtol=0.0, atol=1e-8):
        raise ValueError(f"{name} must hold probability vectors along its last axis (entries >= 0 summing to 1)")
    return arr


@dataclass(frozen=True, eq=False)
class NestedParams:
    """Parameters theta of the nested latent class model (Supp. eq. (1)), checked on construction.

    Attributes
    ----------
    pi : ndarray (G,)
        Household-level class probabilities.
    lam_own, lam_gender : ndarray (G, 2)
        Ownership (0 owned) and head's gender, per household class.
    lam_race : ndarray (G, R)
        Head's race (0 white), per household class.
    w : ndarray (G, M)
        Individual-level class probabilities within each household class.
    phi_gender : ndarray (G, M, 2)
        A member's gender, per (household, individual) class.
    phi_race : ndarray (G, M, R)
        A member's race (the head's R levels).
    phi_rel : ndarray (G, M, K)
        A member's relationship to the head (0 spouse).
    """

    pi: np.ndarray
    lam_own: np.ndarray
    lam_gender: np.ndarray
    lam_race: np.ndarray
    w: np.ndarray
    phi_gender: np.ndarray
    phi_race: np.ndarray
    phi_rel: np.ndarray

    def __post_init__(self):
        pi = _simplex(self.pi, "pi", (None,), "(G,)")
        G = pi.size
        w = _simplex(self.w, "w", (G, None), f"(G, M) = ({G}, M)")
        M = w.shape[1]
        lam_race = _simplex(self.lam_race, "lam_race", (G, None), f"(G, R) = ({G}, R), R >= 2", 2)
        R = lam_race.shape[1]
        phi_rel = _simplex(self.phi_rel, "phi_rel", (G, M, None), f"(G, M, K) = ({G}, {M}, K), K >= 2", 2)
        checked = dict(pi=pi, w=w, lam_race=lam_race, phi_rel=phi_rel,
                       lam_own=_simplex(self.lam_own, "lam_own", (G, 2), f"(G, 2) = ({G}, 2)"),
                       lam_gender=_simplex(self.lam_gender, "lam_gender", (G, 2), f"(G, 2) = ({G}, 2)"),
                       phi_gender=_simplex(self.phi_gender, "phi_gender", (G, M, 2), f"(G, M, 2) = ({G}, {M}, 2)"))
        if np.ndim(self.phi_race) == 3 and np.shape(self.phi_race)[:2] == (G, M) and np.shape(self.phi_race)[2] != R:
            raise ValueError(f"phi_race has {np.shape(self.phi_race)[2]} race levels but lam_race has {R}: "
                             "members and heads share the race levels")
        checked["phi_race"] = _simplex(self.phi_race, "phi_race", (G, M, R), f"(G, M, R) = ({G}, {M}, {R})")
        for k, v in checked.items():
            object.__setattr__(self, k, v)

    @property
    def shape(self):
        """(G, M, R, K): household classes, individual classes, race levels, relationship levels."""
        return self.w.shape + (self.lam_race.shape[1], self.phi_rel.shape[2])

    def pack(self):
        """All simplex vectors as rows of one array (the layout of :func:`row_lengths`), zero-padded."""
        G, M, R, K = self.shape
        lengths = row_lengths(G, M, R, K)
        theta = np.zeros((lengths.size, lengths.max()))
        theta[0, :G] = self.pi
        for g in range(G):
            theta[1 + 3 * g, :2], theta[2 + 3 * g, :2], theta[3 + 3 * g, :R] = (self.lam_own[g], self.lam_gender[g],
                                                                                self.lam_race[g])
            theta[1 + 3 * G + g, :M] = self.w[g]
            for m in range(M):
                b = 1 + 4 * G + 3 * (g * M + m)
                theta[b, :2], theta[b + 1, :R], theta[b + 2, :K] = (self.phi_gender[g, m], self.phi_race[g, m],
                                                                    self.phi_rel[g, m])
        return theta

    @classmethod
    def random(cls, G, M, R, K, *, a=1.0, rng=None):
        """Parameters drawn from the prior: every simplex vector Dirichlet(a, ..., a)."""
        G, M = V.count(G, "G"), V.count(M, "M")
        R, K = V.count(R, "R", minimum=2), V.count(K, "K", minimum=2)
        a = V.positive(a, "a")
        V.work_size(8.0 * G * (5 + R + M * (3 + R + K)), f"NestedParams.random: G = {G} x M = {M} classes",
                    "lower G or M")
        gen = V.rng(rng)
        d = lambda *shape: gen.dirichlet(np.full(shape[-1], float(a)), size=shape[:-1])  # noqa: E731
        return cls(pi=d(G), lam_own=d(G, 2), lam_gender=d(G, 2), lam_race=d(G, R), w=d(G, M),
                   phi_gender=d(G, M, 2), phi_race=d(G, M, R), phi_rel=d(G, M, K))


def row_lengths(G, M, R, K):
    """Lengths of the packed rows: pi; per g (own, gender, race); per g w; per (g, m) (gender, race, rel)."""
    G, M, R, K = V.count(G, "G"), V.count(M, "M"), V.count(R, "R", minimum=2), V.count(K, "K", minimum=2)
    V.work_size(8.0 * (1 + 4 * G + 3 * G * M), f"row_lengths: G = {G} x M = {M} classes", "lower G or M")
    return np.array([G] + [2, 2, R] * G + [M] * G + [2, R, K] * (G * M), dtype=np.int64)


def unpack(theta, G, M, R, K):
    """Packed draws (..., rows, width) back into the named parameter arrays (a dict)."""
    g3, base = 1 + 3 * np.arange(G), 1 + 4 * G + 3 * (np.arange(G)[:, None] * M + np.arange(M)[None, :])
    return {"pi": theta[..., 0, :G], "lam_own": theta[..., g3, :2], "lam_gender": theta[..., g3 + 1, :2],
            "lam_race": theta[..., g3 + 2, :R], "w": theta[..., 1 + 3 * G:1 + 4 * G, :M],
            "phi_gender": theta[..., base, :2], "phi_race": theta[..., base + 1, :R],
            "phi_rel": theta[..., base + 2, :K]}


# %% [markdown]
# The parameters of the simulation below (the ACS sample of the supplement is not available here): $R = 4$ races
# (white, black, Asian, other) and $K = 4$ relationships (spouse, child, parent, other) instead of the ACS's 9 and
# 12; household class 0 is mostly white owner couples with a child, class 1 mostly black households of
# other kinds, tuned by hand so that the five probabilities come near the supplement's ACS proportions. Checks: the
# parameters pack and unpack, and bad input is refused naming the argument.

# %%
#| export
#: The simulation truth of this notebook (households of size three, R = 4 races, K = 4 relationships), also
#: used by the tests and by benchmarks/bench_nested.py, whose stored coverage study the notebook reads.
SIMULATED_TRUTH = NestedParams(
    pi=[0.76, 0.24],
    lam_own=[[0.8, 0.2], [0.5, 0.5]], lam_gender=[[0.6, 0.4], [0.45, 0.55]],
    lam_race=[[0.97, 0.01, 0.01, 0.01], [0.05, 0.85, 0.05, 0.05]],
    w=[[0.55, 0.45], [0.4, 0.6]],
    phi_gender=[[[0.25, 0.75], [0.5, 0.5]], [[0.5, 0.5], [0.4, 0.6]]],
    phi_race=[[[0.975, 0.01, 0.01, 0.005], [0.975, 0.01, 0.005, 0.01]], [[0.04, 0.9, 0.04, 0.02], [0.06, 0.86, 0.05, 0.03]]],
    phi_rel=[[[0.92, 0.04, 0.02, 0.02], [0.04, 0.88, 0.04, 0.04]], [[0.45, 0.25, 0.1, 0.2], [0.05, 0.65, 0.1, 0.2]]])

# %%
TRUE = SIMULATED_TRUTH
G0, M0, R0, K0 = TRUE.shape
packed = TRUE.pack()
assert packed.shape == (1 + 4 * G0 + 3 * G0 * M0, 4)
back = unpack(packed, G0, M0, R0, K0)
assert all(np.array_equal(back[k], getattr(TRUE, k)) for k in PARAM_NAMES)
assert np.allclose(packed.sum(axis=1), 1.0)
good = {k: getattr(TRUE, k) for k in PARAM_NAMES}
for change, word in [(dict(pi=[0.6, 0.3]), "pi must hold probability vectors"),
                     (dict(lam_own=[[1.2, -0.2], [0.5, 0.5]]), "lam_own must hold"),
                     (dict(w=[[0.5, 0.5]]), "w must have shape"),
                     (dict(phi_race=np.full((2, 2, 3), 1 / 3)), "race levels"),
                     (dict(phi_rel=np.full((2, 3, 4), 0.25)), "phi_rel must have shape"),
                     (dict(lam_race=[[1.0], [1.0]]), "lam_race must have shape")]:
    try:
        NestedParams(**dict(good, **change))
    except ValueError as err:
        assert word in str(err), err
    else:
        raise AssertionError(f"{change} accepted")
try:
    NestedParams(**dict(good, pi=["a", "b"]))
except TypeError as err:
    assert "pi" in str(err)
else:
    raise AssertionError("a string pi accepted")

# %% [markdown]
# ## Households from the model, and the five summaries they are counted into (Table 3)
#
# `simulate_households` draws households from eq. (1) (class, household variables, then each member's class and
# variables); the same code draws the synthetic households later. `household_summaries` evaluates the five events
# of the supplement's Table 3 on each household:
#
# | | event |
# |---|---|
# | $S_1$ | all members white (head and every other member of race 0) |
# | $S_2$ | owned by the head (`own` = 0) |
# | $S_3$ | all members of the same race (every member's race equals the head's) |
# | $S_4$ | spouse present (some member has `rel` = 0) |
# | $S_5$ | same-race couple present (some member has `rel` = 0 and the head's race) |
#
# and `summary_counts` counts them. Records are checked first: integer codes in range, $3 + 3(h-1)$ columns,
# and a household size that agrees with `size=` when one is given.

# %%
#| export
def check_households(records, *, size=None, n_race=None, n_rel=None, name="households"):
    """(records as an (n, 3 + 3 (size - 1)) int64 array, size), codes in range."""
    x = V.int_array(records, name)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array of integer codes, got shape {x.shape}, dtype {x.dtype}")
    if x.shape[1] < 6 or (x.shape[1] - 3) % 3:
        raise ValueError(f"{name} must have 3 + 3 (size - 1) columns (own, hh_gender, hh_race, then gender, race, rel "
                         f"of each other member), got {x.shape[1]}")
    found = 1 + (x.shape[1] - 3) // 3
    if size is not None and V.count(size, "size", minimum=2) != found:
        raise ValueError(f"size = {size} but {name} have {x.shape[1]} columns, i.e. households of size {found}")
    races = np.concatenate([x[:, 2:3], x[:, 4::3]], axis=1)
    tops = {"own, hh_gender and gender": (np.concatenate([x[:, :2], x[:, 3::3]], axis=1), 2),
            "race": (races, n_race), "rel": (x[:, 5::3], n_rel)}
    for what, (cols, top) in tops.items():
        if cols.min() < 0 or (top is not None and cols.max() >= top):
            rule = "must be >= 0" if top is None else f"must lie in 0..{top - 1}"
            raise ValueError(f"{name}: every {what} code {rule}, got {cols.min()}..{cols.max()}")
    return x.astype(np.int64), found


def household_summaries(records, *, size=None):
    """The five events of Supp. Table 3 for each household.

    Parameters
    ----------
    records : array_like of int, shape (n, 3 + 3 (size - 1))
        Households: own, hh_gender, hh_race, then gender, race, rel of each other member (codes from 0;
        level 0 is owned, white, spouse).
    size : int, optional
        Household size; when given it must agree with the number of columns.

    Returns
    -------
    ndarray of bool, shape (n, 5)
        Columns S1..S5 (all white, owned, all of one race, spouse present, same-race couple present).
    """
    x, h = check_households(records, size=size, name="records")
    race, rel = x[:, 4::3], x[:, 5::3]
    same = race == x[:, 2:3]
    couple = rel == 0
    return np.stack([(x[:, 2] == 0) & np.all(race == 0, axis=1), x[:, 0] == 0, np.all(same, axis=1),
                     np.any(couple, axis=1), np.any(couple & same, axis=1)], axis=1)


def summary_counts(records, *, size=None):
    """Counts of the five summaries S1..S5 (int64, shape (5,))."""
    return household_summaries(records, size=size).sum(axis=0).astype(np.int64)


def _categorical(probs, gen):
    """One draw per row of ``probs`` (rows of probability vectors), by inverting the cumulative sums."""
    cum = np.cumsum(probs, axis=-1)
    u = gen.random(probs.shape[:-1])[..., None] * cum[..., -1:]
    return np.minimum((u > cum).sum(axis=-1), probs.shape[-1] - 1)


def simulate_households(params, n, *, size=3, rng=None):
    """``n`` households of ``size`` members drawn from the nested model (eq. (1)) at ``params``.

    Returns an int64 array (n, 3 + 3 (size - 1)): own, hh_gender, hh_race, then gender, race, rel of each
    other member.
    """
    if not isinstance(params, NestedParams):
        raise TypeError(f"params must be a NestedParams, got {type(params).__name__}")
    n, size, gen = V.count(n, "n"), V.count(size, "size", minimum=2), V.rng(rng)
    V.work_size(8.0 * n * (3 + 3 * (size - 1) + 2 * max(params.shape)),
                f"simulate_households: n = {n:,} households of size {size}", "lower n")
    p = params
    g = gen.choice(p.pi.size, size=n, p=p.pi / p.pi.sum())
    out = np.empty((n, 3 + 3 * (size - 1)), dtype=np.int64)
    out[:, 0], out[:, 1], out[:, 2] = (_categorical(p.lam_own[g], gen), _categorical(p.lam_gender[g], gen),
                                       _categorical(p.lam_race[g], gen))
    for i in range(size - 1):
        m = _categorical(p.w[g], gen)
        for j, phi in enumerate((p.phi_gender, p.phi_race, p.phi_rel)):
            out[:, 3 + 3 * i + j] = _categorical(phi[g, m], gen)
    return out


# %%
tiny_h = np.array([[0, 1, 0, 0, 0, 0, 1, 0, 1],     # owned, all white, spouse (white): S1..S5
                   [1, 0, 2, 1, 2, 1, 0, 2, 2],     # rented, all race 2, no spouse: S3
                   [0, 0, 1, 0, 1, 0, 0, 3, 1]])    # owned, spouse of the head's race, a member of another race
assert household_summaries(tiny_h).astype(int).tolist() == [[1, 1, 1, 1, 1], [0, 0, 1, 0, 0], [0, 1, 0, 1, 1]]
assert summary_counts(tiny_h).tolist() == [1, 2, 2, 2, 2]
for bad, kw, word in [(tiny_h[:, :8], {}, "3 + 3 (size - 1) columns"), (tiny_h, dict(size=4), "size = 4"),
                      (tiny_h - 1, {}, "must lie in"), (tiny_h.astype(float), {}, "must be an array of integers")]:
    try:
        summary_counts(bad, **kw)
    except (ValueError, TypeError) as err:
        assert word in str(err), err
    else:
        raise AssertionError(f"{word}: accepted")
sim = simulate_households(TRUE, 50_000, rng=rng)
assert sim.shape == (50_000, 9) and sim[:, 2].max() == 3 and sim[:, 5::3].max() == 3
assert np.array_equal(simulate_households(TRUE, 100, rng=5), simulate_households(TRUE, 100, rng=5))

# %% [markdown]
# ## The summary probabilities $P(S_1, \dots, S_5 \mid \theta)$ (Supp. eq. (2))
#
# Given $g$, the other members are independent and alike, so each summary is a sum over $g$ (and over the head's
# race $r$) of powers of per-member probabilities. With $h - 1$ other members,
# $u_{gr} = \sum_m w_{gm} \phi^{(2)}_{gmr}$ (a member has race $r$), $q_g = \sum_m w_{gm} \phi^{(3)}_{gm,\text{spouse}}$ (a
# member is a spouse) and $a_{gr} = \sum_m w_{gm} \phi^{(2)}_{gmr} \phi^{(3)}_{gm,\text{spouse}}$ (a member is a spouse of
# race $r$):
#
# $$\begin{aligned}
# P(S_1 \mid \theta) &= \textstyle\sum_g \pi_g \lambda^{(2)}_{g,\text{white}}\, u_{g,\text{white}}^{h-1}, &
# P(S_2 \mid \theta) &= \textstyle\sum_g \pi_g \lambda^{(0)}_{g,\text{owned}}, \\
# P(S_3 \mid \theta) &= \textstyle\sum_r \sum_g \pi_g \lambda^{(2)}_{gr}\, u_{gr}^{h-1}, &
# P(S_4 \mid \theta) &= \textstyle\sum_g \pi_g \big(1 - (1 - q_g)^{h-1}\big), \\
# P(S_5 \mid \theta) &= \textstyle\sum_r \sum_g \pi_g \lambda^{(2)}_{gr} \big(1 - (1 - a_{gr})^{h-1}\big). &&
# \end{aligned}$$
#
# For $h = 3$ these are the supplement's eq. (2): $1 - (1 - q)^2 = 2q - q^2$ is its inclusion-exclusion for "at least
# one of the two members". The cost is $O(G M R)$, nothing like the $2 \cdot 2 \cdot R \cdot (2RK)^{h-1}$ household
# configurations. The numba kernel reads the parameters in the packed layout (one row per simplex vector), so that
# the sampler can change one row and recompute the five probabilities in place.

# %%
#| export
@njit(cache=True, nogil=True)
def summary_probs_kernel(theta, G, M, R, k, out):
    """P(S_1..S_5 | theta) from packed parameters, households of k + 1 members (Supp. eq. (2)), into ``out``."""
    out[:] = 0.0
    for g in range(G):
        wrow, q = 1 + 3 * G + g, 0.0
        for m in range(M):
            q += theta[wrow, m] * theta[1 + 4 * G + 3 * (g * M + m) + 2, 0]
        s1 = s3 = s5 = 0.0
        for r in range(R):
            u = a = 0.0
            for m in range(M):
                b = 1 + 4 * G + 3 * (g * M + m)
                u += theta[wrow, m] * theta[b + 1, r]
                a += theta[wrow, m] * theta[b + 1, r] * theta[b + 2, 0]
            lam = theta[3 + 3 * g, r]
            s3 += lam * u ** k
            s5 += lam * (1.0 - (1.0 - a) ** k)
            if r == 0:
                s1 = lam * u ** k
        pg = theta[0, g]
        out[0] += pg * s1
        out[1] += pg * theta[1 + 3 * g, 0]
        out[2] += pg * s3
        out[3] += pg * (1.0 - (1.0 - q) ** k)
        out[4] += pg * s5
    return out


def summary_probs(params, *, size=3):
    """P(S_1, ..., S_5 | theta) of Supp. eq. (2) (households of ``size`` members), an array (5,).

    Examples
    --------
    >>> p = NestedParams.random(2, 2, 3, 3, rng=0)
    >>> probs = summary_probs(p)
    >>> probs.shape, bool(np.all((probs > 0) & (probs < 1)))
    ((5,), True)
    """
    if not isinstance(params, NestedParams):
        raise TypeError(f"params must be a NestedParams, got {type(params).__name__}")
    G, M, R, _ = params.shape
    k = V.count(size, "size", minimum=2) - 1
    return summary_probs_kernel(params.pack(), G, M, R, k, np.empty(5))


# %% [markdown]
# **Check against brute force.** `household_probs` is eq. (1) itself, household by household (vectorised NumPy, a
# different writing). On a small case ($R = K = 3$, $G = 2$, $M = 2$) we enumerate every household of size three
# ($2 \cdot 2 \cdot 3 \cdot (2 \cdot 3 \cdot 3)^2 = 3{,}888$ configurations), check that their probabilities sum to 1, and
# sum the probabilities of the households where each event holds (`household_summaries`, the same function that
# counts the data). Each of the five closed forms must agree to $10^{-12}$, and so must eq. (2) as printed in the
# supplement; sizes two and four too.

# %%
#| export
def household_probs(params, records):
    """P(X = x | theta) of eq. (1) for each household of ``records``.

    Parameters
    ----------
    params : NestedParams
        The model's parameters.
    records : array_like of int, shape (n, 3 + 3 (size - 1))
        Households (columns as in :func:`household_summaries`), codes within the levels of ``params``.

    Returns
    -------
    ndarray, shape (n,)
        The probability of each household under the nested model.
    """
    if not isinstance(params, NestedParams):
        raise TypeError(f"params must be a NestedParams, got {type(params).__name__}")
    _, _, R, K = params.shape
    x, h = check_households(records, n_race=R, n_rel=K, name="records")
    p = params
    prob = p.pi[None, :] * p.lam_own[:, x[:, 0]].T * p.lam_gender[:, x[:, 1]].T * p.lam_race[:, x[:, 2]].T   # (n, G)
    for i in range(h - 1):
        g_, r_, l_ = x[:, 3 + 3 * i], x[:, 4 + 3 * i], x[:, 5 + 3 * i]
        member = p.phi_gender[:, :, g_] * p.phi_race[:, :, r_] * p.phi_rel[:, :, l_]                          # (G, M, n)
        prob = prob * np.einsum("gm,gmn->ng", p.w, member)
    return prob.sum(axis=1)


def household_table(params, *, size=3):
    """Every household configuration of ``size`` members and its probability (small cases only).

    Returns ``(records, probs)``: an int64 array of all ``2 * 2 * R * (2 R K) ** (size - 1)`` households (at most
    2**21) and their probabilities under eq. (1), which sum to 1. The brute-force check of :func:`summary_probs`.
    """
    if not isinstance(params, NestedParams):
        raise TypeError(f"params must be a NestedParams, got {type(params).__name__}")
    _, _, R, K = params.shape
    size = V.count(size, "size", minimum=2)
    levels = [2, 2, R] + [2, R, K] * (size - 1)
    if math.prod(levels) > 2**21:
        raise ValueError(f"the household table has {math.prod(levels)} configurations (at most 2**21)")
    records = np.array(list(np.ndindex(*levels)), dtype=np.int64)
    return records, household_probs(params, records)


# %%
#| export
def summary_probs_paper(p):
    """Supp. eq. (2) exactly as printed (households of size three): a twin of `summary_probs`, written differently."""
    if not isinstance(p, NestedParams):
        raise TypeError(f"p must be a NestedParams, got {type(p).__name__}")
    u = np.einsum("gm,gmr->gr", p.w, p.phi_race)
    q = np.einsum("gm,gm->g", p.w, p.phi_rel[:, :, 0])
    a = np.einsum("gm,gmr,gm->gr", p.w, p.phi_race, p.phi_rel[:, :, 0])
    pi, lr = p.pi, p.lam_race
    return np.array([np.sum(pi * lr[:, 0] * u[:, 0] ** 2), np.sum(pi * p.lam_own[:, 0]),
                     np.sum(pi[:, None] * lr * u ** 2), 2 * np.sum(pi * q) - np.sum(pi * q ** 2),
                     2 * np.sum(pi[:, None] * lr * a) - np.sum(pi[:, None] * lr * a ** 2)])


# %%
worst = {}
for G_, M_, size_ in [(2, 2, 3), (3, 2, 3), (1, 1, 3), (2, 3, 2), (2, 2, 4)]:
    small_p = NestedParams.random(G_, M_, 3, 3 if size_ < 4 else 2, rng=rng)
    recs, probs = household_table(small_p, size=size_)
    brute = probs @ household_summaries(recs)
    closed = summary_probs(small_p, size=size_)
    assert abs(probs.sum() - 1) < 1e-12
    worst[(G_, M_, size_)] = np.abs(closed - brute)
    assert np.all(np.abs(closed - brute) < 1e-12), (G_, M_, size_, closed - brute)
    if size_ == 3:
        assert np.all(np.abs(summary_probs_paper(small_p) - brute) < 1e-12)
print(f"{len(recs)} configurations at size 4; largest |closed form - enumeration| per summary over the five cases:\n",
      np.max(list(worst.values()), axis=0))
assert len(household_table(NestedParams.random(2, 2, 3, 3, rng=1))[0]) == 3888
truth = summary_probs(TRUE)
sim_counts = summary_counts(sim)
z = (sim_counts / 50_000 - truth) / np.sqrt(truth * (1 - truth) / 50_000)
print("P(S | theta_true):", np.round(truth, 4), "\nsimulated 50,000 households, z-scores:", np.round(z, 2))
assert np.all(np.abs(z) < 4.5)


# %% [markdown]
# ## When to use this
#
# * `summary_probs` whenever the five probabilities of a $\theta$ are needed; the sampler of notebook 55 calls its
#   kernel `summary_probs_kernel` on the packed layout after every proposal, at a cost of $O(GMR)$.
# * `simulate_households` to draw households from eq. (1): the simulated data of notebooks 55 and 84, and the
#   synthetic households of `dplit.nested.synthesize_households` at posterior draws.
# * `household_probs` and `household_table` only to check a new closed form on a small case, as above: they enumerate
#   every household configuration, whose number grows as $(2RK)^{h-1}$.
