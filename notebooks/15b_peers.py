# %% [markdown]
# # The peers side by side: latent classes, private-pgm and PrivBayes at equal epsilon
#
# Thin wrappers around private-pgm (`mbi`, a graphical model fitted to the same noisy two-way margins our latent-class model reads) and PrivBayes (`DataSynthesizer`, the code Nixon et al. adapted), charged the same epsilon at the same sensitivity as our geometric release, and compared on the ACS 2^5 table (Fig. 3 of Nixon et al.) and on NLTCS (16 binary variables).

# %%
#| default_exp peers

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite). The repeated runs
# behind the tables below are heavy, so they run as a script whose small stored results this notebook reads:
#
# ```
# .venv/bin/pip install -e ".[peers]"
# .venv/bin/python benchmarks/bench_peers.py --reps 20        # writes benchmarks/results/peers_*.json
# ```
#
# The peers are optional (`pip install dplit[peers]`: `mbi` 1.1.0 brings JAX, about 90 MB of wheels; `DataSynthesizer`
# 0.1.13 brings pandas and seaborn). The notebook runs without them: live cells skip a missing peer and say so, and
# the stored results still show all three.

# %%
# %matplotlib inline
import itertools
import json
import math
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dplit.config import is_quick, size
from dplit.datasets import load_acs_counts
from dplit.latent_class import MarginRelease, cell_intervals, margin_counts, margin_draws, release_margins

SEED = 20261124
n_iter = size(full=2_000, quick=300)      # kept iterations per chain of the latent-class fits
n_warm = size(full=1_000, quick=300)      # warm-up iterations per chain
pgm_iters = size(full=1_000, quick=200)   # mirror-descent iterations of private-pgm
ACS_EPS = (0.25, 0.5, 1.0)                # Fig. 3 of Nixon et al.
RESULTS = Path("..") / "benchmarks" / "results"
print(f"quick mode: {is_quick()}; n_iter = {n_iter}, n_warm = {n_warm}, pgm_iters = {pgm_iters}")

# %% [markdown]
# ## Three ways to spend the same epsilon
#
# All three methods see the same records and may spend the same total $\epsilon$ under the same neighbouring
# relation as our release: **two data sets of the same size $n$ differ in one record** (bounded DP), so that a
# count table has $\ell_1$ sensitivity 2 (Nixon et al., Sec. 3.1).
#
# | method | what it measures | noise | how $\epsilon$ is split | what it gives |
# |---|---|---|---|---|
# | latent classes (ours, `dplit.latent_class`) | the released margins (here all two-way) | two-sided geometric, $t = e^{-\epsilon / (2T)}$ | $\epsilon / T$ per table, $T$ tables | posterior of $(\pi, \Psi)$: any cell with an interval |
# | private-pgm (`mbi`, McKenna et al. 2019) | **the same release**, read as linear measurements | (ours) | (ours) | a graphical model: point estimates of any cell |
# | PrivBayes (`DataSynthesizer`, Zhang et al. 2017; Ping et al. 2017) | the records | exponential mechanism for the network, Laplace for its $(k+1)$-way tables | see below | a Bayesian network: point estimates |
#
# private-pgm is a *post-processing* estimator: it does not touch the data, so handing it our `MarginRelease`
# guarantees equal $\epsilon$ and sensitivity by construction, and the comparison isolates the model (a
# maximum-entropy graphical model fitted by mirror descent vs a Bayesian latent-class model). PrivBayes chooses
# its own margins from the data, so it gets the records and a budget.
#
# **How `DataSynthesizer` 0.1.13 spends its argument `epsilon`** (read from its source,
# `DataDescriber.describe_dataset_in_correlated_attribute_mode` and `lib/PrivBayes.py`), with $d$ attributes and
# degree $k$:
#
# 1. the network: $d - 1$ exponential-mechanism choices of (child, parents) by mutual information, with PrivBayes'
#    bounded-DP sensitivity of mutual information (Lemma 1 of Zhang et al.), together `epsilon / 2`;
# 2. the conditional tables: $d - k$ joint tables of $k + 1$ attributes, each count plus
#    $\mathrm{Laplace}((d - k) / (\epsilon / 2))$, negatives set to 0, normalised. This scale is calibrated to
#    **sensitivity 1** per table (one record added or removed); under our relation a table has sensitivity 2, so
#    this step costs `2 * epsilon / 2 = epsilon` (the PrivBayes paper itself uses the sensitivity-2 scale,
#    $4(d - k) / (n\epsilon)$ on probabilities);
# 3. in passing, a noisy one-way histogram of every attribute (`epsilon / d` each, sensitivity $2/n$ on
#    probabilities): another `epsilon`, used by the package only as a fall-back when sampling.
#
# Our wrapper keeps only the network and the conditional tables (steps 1 and 2; the one-way histograms of step 3
# are discarded unread, so they are never released) and passes `epsilon = 2 eps / 3`, so that it spends
# $\epsilon/3 + 2\epsilon/3 = \epsilon$ in our accounting. Keeping the package's whole description file would
# cost $2.5 \times$ its argument.

# %% [markdown]
# ## A common result: `PeerEstimate`
#
# Each wrapper returns the same small record: the method, its $\epsilon$, the levels and the estimated full-table
# probabilities (all our tables are small: $2^5$ and $2^{16}$ cells), with a `margin` method that sums it to any
# margin in C order, as `dplit.latent_class` lists cells. The peers are imported inside the functions that use them,
# never at import time, with an error that says how to install them.

# %%
#| export
import ast
import contextlib
import io
import itertools
import json
import math
import random
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

from dplit import _validate as V
from dplit.latent_class import (
    MarginRelease,
    _check_levels,
    _latent,
    fit_latent_class,
    margin_counts,
    table_probs,
)
from dplit.sampling import ConvergenceWarning

#: Versions the wrappers were written and checked against (the ``peers`` extra pins them).
PEER_VERSIONS = {"mbi": "1.1.0", "DataSynthesizer": "0.1.13"}


def _require(module, dist):
    """Import an optional peer, or raise an ImportError saying how to install it."""
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{dist} is not installed: pip install dplit[peers] "
                          f"(or pip install {dist}=={PEER_VERSIONS[dist]})") from err
    have = metadata.version(dist)
    if have != PEER_VERSIONS[dist]:
        warnings.warn(f"{dist} {have} is installed; dplit.peers was checked against {PEER_VERSIONS[dist]}",
                      stacklevel=3)
    return mod


@dataclass(frozen=True)
class PeerEstimate:
    """Estimated full-table probabilities from one method (returned by every wrapper of this module).

    Attributes
    ----------
    method : str
        ``"latent_class"``, ``"pgm"`` or ``"privbayes"``.
    eps : float
        Total budget spent on the data (bounded DP, a count table has sensitivity 2).
    levels : tuple of int
    table : ndarray
        Probabilities, shape ``levels``, summing to 1.
    details : dict
        Method-specific: package version, settings, the fitted object, the budget split.
    """

    method: str
    eps: float
    levels: tuple
    table: np.ndarray
    details: dict = field(default_factory=dict, repr=False)

    def margin(self, margin):
        """Probabilities of the cells of ``margin`` (a tuple of variable indices), in C order."""
        m = tuple(int(v) for v in np.atleast_1d(margin))
        if not m or len(set(m)) != len(m) or any(not 0 <= v < len(self.levels) for v in m):
            raise ValueError(f"margin must be distinct variable indices in 0..{len(self.levels) - 1}, got {margin!r}")
        others = tuple(j for j in range(len(self.levels)) if j not in m)
        return self.table.sum(axis=others).transpose(np.argsort(np.argsort(m))).ravel()

    @property
    def has_intervals(self):
        """True when the method gives uncertainty (posterior draws), False for point estimates."""
        return "fit" in self.details and self.method == "latent_class"


def _as_table(values, levels):
    """Probabilities of shape ``levels``: clipped at 0 and normalised (peers return counts or float32)."""
    arr = np.clip(np.asarray(values, dtype=float).reshape(levels), 0.0, None)
    return arr / arr.sum()


# %%
demo = np.arange(12, dtype=float).reshape(2, 3, 2)
pe = PeerEstimate("demo", 1.0, (2, 3, 2), demo / demo.sum())
assert np.allclose(pe.margin((0,)), [demo[0].sum(), demo[1].sum()] / demo.sum())
assert np.allclose(pe.margin((2, 0)), demo.sum(axis=1).T.ravel() / demo.sum())      # C order of (x2, x0)
assert np.allclose(pe.margin((0, 1, 2)), demo.ravel() / demo.sum()) and not pe.has_intervals
for bad in [(0, 0), (3,), ()]:
    try:
        pe.margin(bad)
    except ValueError as err:
        assert "margin" in str(err)
    else:
        raise AssertionError(f"{bad} accepted")
try:
    _require("no_such_peer_module", "mbi")
except ImportError as err:
    assert "pip install dplit[peers]" in str(err)
else:
    raise AssertionError("a missing peer was imported")

# %% [markdown]
# ## private-pgm on our release
#
# McKenna, Sheldon and Miklau (2019) estimate the distribution $\hat p$ that best explains noisy linear
# measurements $y_t = M_t(p) + \text{noise}$ of marginals, by minimising $\sum_t \|M_t(p) - y_t\|_2^2 / \sigma_t$
# over the marginal polytope with mirror descent; the minimiser is a Markov random field on the measured cliques
# (`mbi.estimation.mirror_descent`, the package's recommended estimator). We pass each released table as one
# `LinearMeasurement` with $\sigma_t$ the standard deviation of the two-sided geometric noise,
# $\sqrt{2t}/(1-t)$ (all tables share it, so it only scales the loss), and $n$ as the known total, as our model
# does. Mirror descent is deterministic: there is nothing to seed. (Importing `mbi` switches JAX to float64 for the
# whole process: `jax.config.update("jax_enable_x64", True)` in `mbi/factor.py`.)

# %%
#| export
def geometric_sd(t):
    """Standard deviation of two-sided geometric noise with parameter ``t`` (P(k) ~ t^|k|): sqrt(2t) / (1 - t)."""
    t = V.unit_interval(t, "t", closed_low=True)
    return math.sqrt(2 * t) / (1 - t)


def pgm_fit(release, *, iters=1000):
    """private-pgm (``mbi`` mirror descent) fitted to the noisy margins of ``release``.

    Parameters
    ----------
    release : MarginRelease
        The same release our latent-class model reads (so the same eps and sensitivity).
    iters : int, default 1000
        Mirror-descent iterations.

    Returns
    -------
    PeerEstimate
        ``details``: ``version``, ``iters``, ``stddev``, ``model`` (the ``mbi.MarkovRandomField``).
    """
    if not isinstance(release, MarginRelease):
        raise TypeError(f"release must be a MarginRelease, got {type(release).__name__}")
    iters = V.count(iters, "iters")
    if math.prod(release.levels) > 2**22:
        raise ValueError(f"the full table has {math.prod(release.levels)} cells; pgm_fit returns full tables "
                         "(at most 2**22 cells)")
    mbi = _require("mbi", "mbi")
    from mbi import estimation

    names = [f"a{j}" for j in range(len(release.levels))]
    sd = geometric_sd(release.t) if release.t > 0 else 1.0
    measurements = [mbi.LinearMeasurement(np.asarray(c, dtype=float), tuple(names[v] for v in m), stddev=sd)
                    for m, c in zip(release.margins, release.counts)]
    domain = mbi.Domain(names, list(release.levels))
    model = estimation.mirror_descent(domain, measurements, known_total=float(release.n), iters=iters)
    full = np.asarray(model.project(tuple(names)).datavector(flatten=False))
    return PeerEstimate("pgm", release.eps, release.levels, _as_table(full, release.levels),
                        {"version": metadata.version("mbi"), "iters": iters, "stddev": sd, "model": model})


# %%
rng = np.random.default_rng(SEED)
z = rng.random(4000) < 0.4                     # a small correlated table: 4 binary variables, one latent cause
x_small = (rng.random((4000, 4)) < np.where(z[:, None], 0.8, 0.2)).astype(np.int64)
pairs4 = list(itertools.combinations(range(4), 2))
truth_small = np.bincount(np.ravel_multi_index(x_small.T, (2,) * 4), minlength=16).reshape((2,) * 4) / 4000
assert abs(geometric_sd(0.5) - 2.0) < 1e-12 and geometric_sd(0.0) == 0.0
try:
    import mbi  # noqa: F401
    HAVE_PGM = True
except ImportError:
    HAVE_PGM = False
    print("mbi is not installed: pip install dplit[peers] to run private-pgm live")
if HAVE_PGM:
    exact = release_margins(x_small, pairs4, eps=np.inf)
    pg = pgm_fit(exact, iters=pgm_iters)
    gap = max(np.abs(pg.margin(m) - c / 4000).max() for m, c in zip(pairs4, exact.counts))
    print(f"pgm on exact two-way margins: largest gap to the true two-way cells {gap:.1e}")
    assert gap < 2e-4                                          # exact margins are reproduced
    again = pgm_fit(exact, iters=pgm_iters)
    assert np.array_equal(again.table, pg.table)               # deterministic
try:
    pgm_fit(x_small)
except TypeError as err:
    assert "MarginRelease" in str(err)
else:
    raise AssertionError("records accepted by pgm_fit")

# %% [markdown]
# ## PrivBayes through `DataSynthesizer`
#
# `DataSynthesizer` reads a CSV file and writes a JSON description: the Bayesian network (a list of (child, parents))
# and the noisy conditional distributions. The wrapper writes the records to a temporary CSV with every attribute
# declared categorical with domain $0..d_j - 1$ (so a level absent from the data still gets a cell), runs the
# correlated attribute mode with degree $k$ (`k=2` is the paper's), and multiplies the conditional tables out into
# the full table, $\hat p(x) = \hat p(x_{\text{root}}) \prod_{\text{child}} \hat p(x_{\text{child}} \mid
# x_{\text{parents}})$, exactly rather than by sampling records.
#
# Three things about the package, and what the wrapper does about them:
#
# * **Randomness** comes from the *global* `random` and `numpy.random` states, which the package seeds itself
#   (`seed=`). The wrapper draws that seed from `rng`, and saves and restores both global states around the call:
#   same `rng`, same result, and the caller's global state is untouched.
# * **Speed.** Each step of the greedy network search computes the mutual information of every candidate (child,
#   parents) by joining the parents' values into strings row by row (`pandas.apply`), about 0.15 s per candidate
#   on NLTCS and 2,380 candidates for 16 attributes and $k = 2$: several minutes per fit. The wrapper swaps in a
#   function that computes the same mutual information from integer codes (checked equal below to $10^{-12}$), and
#   runs the candidates in the calling process rather than in a `multiprocessing.Pool` (forking a process that has
#   started JAX's threads can deadlock). Neither change touches what is computed from the data or the noise.
# * **Budget**: `epsilon = 2 eps / 3` as derived above.

# %%
#| export
def _mutual_information_codes(labels_x, labels_y):
    """Mutual information (nats) of a Series and a DataFrame of labels, as DataSynthesizer's, from integer codes."""
    import pandas as pd

    cols = [labels_y] if isinstance(labels_y, pd.Series) else [labels_y[c] for c in labels_y.columns]
    y = np.zeros(len(labels_x), dtype=np.int64)
    for c in cols:
        codes, uniques = pd.factorize(c, sort=True)
        y = y * len(uniques) + codes
    xc = pd.factorize(labels_x, sort=True)[0]
    _, yc = np.unique(y, return_inverse=True)
    joint = np.zeros((xc.max() + 1, yc.max() + 1))
    np.add.at(joint, (xc, yc), 1.0)
    joint /= joint.sum()
    px, py = joint.sum(axis=1, keepdims=True), joint.sum(axis=0, keepdims=True)
    nz = joint > 0
    return float(max(0.0, np.sum(joint[nz] * (np.log(joint[nz]) - np.log((px @ py)[nz])))))


class _SerialPool:
    """Stands in for multiprocessing.Pool in DataSynthesizer: the same map, in this process."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, tasks):
        return [fn(t) for t in tasks]


@contextlib.contextmanager
def _datasynthesizer_session(seed):
    """Fast MI, serial pool, stdout and deprecation warnings silenced, global random states restored."""
    pb = _require("DataSynthesizer.lib.PrivBayes", "DataSynthesizer")
    saved = (pb.mutual_information, pb.Pool, random.getstate(), np.random.get_state())
    pb.mutual_information, pb.Pool = _mutual_information_codes, _SerialPool
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            for cat in (DeprecationWarning, FutureWarning, PendingDeprecationWarning):
                warnings.simplefilter("ignore", cat)
            warnings.filterwarnings("ignore", "overflow encountered in exp", RuntimeWarning)   # huge eps: handled
            random.seed(seed)
            np.random.seed(seed)
            yield pb
    finally:
        pb.mutual_information, pb.Pool = saved[0], saved[1]
        random.setstate(saved[2])
        np.random.set_state(saved[3])


# %%
import pandas as pd  # noqa: E402  (a dependency of arviz, and of DataSynthesizer)

try:
    import DataSynthesizer  # noqa: F401
    from DataSynthesizer.lib.utils import mutual_information as ds_mutual_information
    HAVE_DS = True
except ImportError:
    HAVE_DS = False
    print("DataSynthesizer is not installed: pip install dplit[peers] to run PrivBayes live")
frame = pd.DataFrame(rng.integers(0, 3, size=(500, 3)), columns=["a", "b", "c"]).astype(str)
for child, parents in [("a", ["b"]), ("a", ["b", "c"]), ("c", ["a", "b"])]:
    mine = _mutual_information_codes(frame[child], frame[parents])
    if HAVE_DS:
        assert abs(mine - ds_mutual_information(frame[child], frame[parents])) < 1e-12
    assert mine >= 0
assert _mutual_information_codes(frame["a"], frame[["a"]]) > 1.0       # I(X; X) = H(X), about log 3
if HAVE_DS:
    state = np.random.get_state()[1].copy()
    with _datasynthesizer_session(5):
        inside = np.random.random()
    with _datasynthesizer_session(5):
        assert np.random.random() == inside                      # seeded inside
    assert np.array_equal(np.random.get_state()[1], state)        # restored outside

# %% [markdown]
# Now the wrapper: input checks, the CSV, the description, the product of the conditional tables.

# %%
#| export
def _parse_key(key):
    """Parent levels from a DataSynthesizer key such as '[0, 1]' or '[np.int64(0), np.int64(1)]'."""
    return tuple(int(v) for v in ast.literal_eval(re.sub(r"np\.\w+\((-?\d+)\)", r"\1", key)))


def _bn_table(network, conditionals, levels, names):
    """Full-table probabilities of a Bayesian network (DataSynthesizer's description), shape ``levels``."""
    pos = {name: j for j, name in enumerate(names)}
    p = len(levels)
    root = network[0][1][0]
    table = np.ones(levels)
    dist = np.zeros(levels[pos[root]])
    dist[:len(conditionals[root])] = conditionals[root]
    table *= dist.reshape([levels[j] if j == pos[root] else 1 for j in range(p)])
    for child, parents in network:
        c, ps = pos[child], [pos[q] for q in parents]
        cpt = np.full([levels[q] for q in ps] + [levels[c]], 1.0 / levels[c])     # unseen parent levels: uniform
        for key, probs in conditionals[child].items():
            row = np.zeros(levels[c])
            row[:len(probs)] = probs
            cpt[_parse_key(key)] = row / row.sum() if row.sum() > 0 else 1.0 / levels[c]
        order = ps + [c]
        shape = [levels[j] if j in order else 1 for j in range(p)]
        table = table * np.moveaxis(cpt, range(len(order)), np.argsort(np.argsort(order))).reshape(shape)
    return table


def privbayes_fit(records, eps, *, levels=None, degree=2, rng=None, names=()):
    """PrivBayes (``DataSynthesizer`` correlated attribute mode) at total budget ``eps`` under bounded DP.

    Parameters
    ----------
    records : array_like of int, shape (n, p)
        Integer codes ``0..levels[j]-1``.
    eps : float
        Total budget. The package is called with ``epsilon = 2 eps / 3``: ``eps / 3`` for the network
        (exponential mechanism), ``2 eps / 3`` for the conditional tables (its Laplace noise is calibrated to
        sensitivity 1; a table has sensitivity 2 under bounded DP). Its noisy one-way histograms are discarded.
    levels : sequence of int, optional
        Levels per variable (default ``max + 1`` of each column).
    degree : int, default 2
        Largest number of parents (PrivBayes' k).
    rng : None, int or numpy.random.Generator
        Source of the package's seed; the global random states are restored afterwards.
    names : sequence of str, optional
        Variable names (default ``x0, x1, ...``).

    Returns
    -------
    PeerEstimate
        ``details``: ``version``, ``degree``, ``seed``, ``epsilon_argument``, ``network`` (child, parents) by
        name, ``budget`` (the split).
    """
    x = np.asarray(records)
    margin_counts(x, [(0,)], levels)                                  # the records checks, one wording
    levels = _check_levels([max(int(c.max()) + 1, 2) for c in x.T] if levels is None else levels)
    eps = V.epsilon(eps, "eps")
    p = len(levels)
    if p < 2:
        raise ValueError("records must have at least 2 columns (PrivBayes builds a network)")
    degree = V.count(degree, "degree")
    if degree >= p:
        raise ValueError(f"degree must be < the number of variables ({p}), got {degree}")
    names = tuple(str(s) for s in names) or tuple(f"x{j}" for j in range(p))
    if len(names) != p or len(set(names)) != p:
        raise ValueError(f"names must be {p} distinct strings, got {names!r}")
    seed = int(V.rng(rng).integers(2**31 - 1))
    eps_arg = 2.0 * eps / 3.0
    with tempfile.TemporaryDirectory() as tmp, _datasynthesizer_session(seed):
        from DataSynthesizer.DataDescriber import DataDescriber

        csv, dom = Path(tmp) / "records.csv", Path(tmp) / "domains.json"
        np.savetxt(csv, x, fmt="%d", delimiter=",", header=",".join(names), comments="")
        dom.write_text(json.dumps({nm: list(range(lv)) for nm, lv in zip(names, levels)}))
        describer = DataDescriber(category_threshold=max(levels) + 1)
        describer.describe_dataset_in_correlated_attribute_mode(
            str(csv), k=degree, epsilon=eps_arg, attribute_to_is_categorical=dict.fromkeys(names, True),
            attribute_to_is_candidate_key=dict.fromkeys(names, False), categorical_attribute_domain_file=str(dom),
            seed=seed)
        desc = describer.data_description
    network = [(child, list(parents)) for child, parents in desc["bayesian_network"]]
    table = _bn_table(network, desc["conditional_probabilities"], levels, names)
    return PeerEstimate("privbayes", eps, levels, _as_table(table, levels),
                        {"version": metadata.version("DataSynthesizer"), "degree": degree, "seed": seed,
                         "epsilon_argument": eps_arg, "network": network,
                         "budget": {"network (exponential mechanism)": eps / 3,
                                    "conditional tables (Laplace, sensitivity 2)": 2 * eps / 3}})


# %%
cpt_net = [("b", ["a"]), ("c", ["a", "b"])]                  # a -> b, (a, b) -> c: the product is the joint
joint = rng.dirichlet(np.ones(8)).reshape(2, 2, 2)
cond = {"a": joint.sum(axis=(1, 2)).tolist(),
        "b": {f"[{i}]": (joint[i].sum(axis=1) / joint[i].sum()).tolist() for i in range(2)},
        "c": {f"[np.int64({i}), np.int64({j})]": (joint[i, j] / joint[i, j].sum()).tolist()
              for i in range(2) for j in range(2)}}
assert np.allclose(_bn_table(cpt_net, cond, (2, 2, 2), ("a", "b", "c")), joint)
assert np.allclose(_bn_table([("a", ["c"]), ("b", ["a", "c"])],                 # parents listed in any order
                             {"c": joint.sum(axis=(0, 1)).tolist(),
                              "a": {f"[{k}]": (joint[:, :, k].sum(axis=1) / joint[:, :, k].sum()).tolist()
                                    for k in range(2)},
                              "b": {f"[{i}, {k}]": (joint[i, :, k] / joint[i, :, k].sum()).tolist()
                                    for i in range(2) for k in range(2)}}, (2, 2, 2), ("a", "b", "c")), joint)
for bad_args, word in [((x_small, 0.0), "eps"), ((x_small[:, :1], 1.0), "2 columns"),
                       ((x_small, 1.0, {"degree": 4}), "degree"), ((x_small - 1, 1.0), "records"),
                       ((x_small, 1.0, {"names": ("a", "a", "b", "c")}), "names")]:
    kwargs = bad_args[2] if len(bad_args) > 2 else {}
    try:
        privbayes_fit(*bad_args[:2], **kwargs)
    except (ValueError, TypeError) as err:
        assert word in str(err), err
    else:
        raise AssertionError(f"{word}: bad input accepted")
if HAVE_DS:
    x3 = x_small[:, :3]                    # three variables, degree 2: the network is the whole joint
    pb_big = privbayes_fit(x3, 1e7, rng=1)
    truth3 = truth_small.sum(axis=3)
    print(f"PrivBayes at eps = 1e7, 3 variables: network {pb_big.details['network']}, largest cell gap "
          f"{np.abs(pb_big.table - truth3).max():.1e}")
    assert np.abs(pb_big.table - truth3).max() < 1e-4       # reproduces the full table
    pb_a, pb_b = privbayes_fit(x_small, 1.0, rng=3), privbayes_fit(x_small, 1.0, rng=3)
    assert np.array_equal(pb_a.table, pb_b.table)           # same rng, same result
    assert not np.array_equal(pb_a.table, privbayes_fit(x_small, 1.0, rng=4).table)

# %% [markdown]
# ## Our model as a peer, and the errors we compare
#
# `latent_class_estimate` fits `dplit.latent_class.fit_latent_class` to the release and returns its posterior mean
# of the full table (from at most `max_draws` posterior draws of $(\pi, \Psi)$: the full table of each draw is a
# $k$-class product mixture, and their average is one mixture of all of them) with the fit kept in `details`, so
# that `margin_draws` and `cell_intervals` give intervals for any cell. We use `weight="auto"`, the magnitude
# adjustment notebook 14 found necessary for honest intervals (its point estimates barely differ from `weight=1`).
#
# Errors against a true table $p$: the total variation distance of the full table, $\frac12 \sum_x |\hat p(x) -
# p(x)|$; the mean absolute error over the cells of all two-way margins; and, where there are intervals, their
# coverage of the true two-way cells.

# %%
#| export
def latent_class_estimate(release, *, k=10, weight="auto", n_iter=2000, n_warmup=1000, n_chains=2, rng=None,
                          max_draws=300):
    """Our latent-class model as a peer: posterior mean of the full table, with the fit in ``details["fit"]``.

    ``max_draws`` posterior draws (evenly spaced over all chains) give the full-table mean; the other arguments go
    to :func:`dplit.latent_class.fit_latent_class` (convergence warnings are silenced; read ``details["fit"]``).
    """
    if not isinstance(release, MarginRelease):
        raise TypeError(f"release must be a MarginRelease, got {type(release).__name__}")
    max_draws = V.count(max_draws, "max_draws")
    if math.prod(release.levels) > 2**22:
        raise ValueError(f"the full table has {math.prod(release.levels)} cells (at most 2**22)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_latent_class(release, k=k, weight=weight, n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains,
                               rng=rng, progress=False)
    pi, Psi, levels = _latent(fit)
    pi, Psi = pi.reshape(-1, pi.shape[-1]), Psi.reshape((-1,) + Psi.shape[2:])
    keep = np.unique(np.linspace(0, pi.shape[0] - 1, min(max_draws, pi.shape[0])).astype(int))
    w = pi[keep] / pi[keep].sum(axis=1, keepdims=True) / keep.size
    table = table_probs(w.ravel(), Psi[keep].reshape((-1,) + Psi.shape[2:]), levels)
    return PeerEstimate("latent_class", release.eps, levels, _as_table(table, levels),
                        {"fit": fit, "k": k, "weight": weight, "draws_in_mean": int(keep.size)})


def all_pairs(p):
    """All two-way margins of ``p`` variables, in order: (0, 1), (0, 2), ..., (p-2, p-1)."""
    return list(itertools.combinations(range(V.count(p, "p", 2)), 2))


def estimate_errors(estimate, truth, *, margins=None, level=0.95):
    """Errors of a :class:`PeerEstimate` against the true table ``truth`` (probabilities, shape ``levels``).

    Returns a dict: ``full_tv`` (total variation of the full table), ``margin_mae`` and ``margin_max`` (mean and
    largest absolute error over the cells of ``margins``, default all two-way margins), and for the latent-class
    model ``coverage`` of the ``level`` posterior intervals of those cells and their mean ``length``.
    """
    truth = np.asarray(truth, dtype=float)
    if truth.shape != tuple(estimate.levels) or np.any(truth < 0) or abs(truth.sum() - 1) > 1e-6:
        raise ValueError(f"truth must be probabilities of shape {tuple(estimate.levels)} summing to 1")
    margins = all_pairs(len(estimate.levels)) if margins is None else margins
    ref = PeerEstimate("truth", math.inf, estimate.levels, truth)
    true_m = np.concatenate([ref.margin(m) for m in margins])
    est_m = np.concatenate([estimate.margin(m) for m in margins])
    out = {"method": estimate.method, "eps": estimate.eps,
           "full_tv": float(0.5 * np.abs(estimate.table - truth).sum()),
           "margin_mae": float(np.abs(est_m - true_m).mean()), "margin_max": float(np.abs(est_m - true_m).max())}
    if estimate.has_intervals:
        from dplit.latent_class import cell_intervals, margin_draws

        _, lo, hi = cell_intervals(np.concatenate([margin_draws(estimate.details["fit"], m) for m in margins],
                                                  axis=-1), level)
        out["coverage"] = float(np.mean((lo <= true_m) & (true_m <= hi)))
        out["length"] = float(np.mean(hi - lo))
    return out


# %%
lc_small = latent_class_estimate(release_margins(x_small, pairs4, eps=np.inf), k=2, n_iter=n_iter, n_warmup=n_warm,
                                 rng=2)
err_lc = estimate_errors(lc_small, truth_small)
print({k: round(v, 4) if isinstance(v, float) else v for k, v in err_lc.items()})
assert err_lc["margin_max"] < 0.01 and err_lc["full_tv"] < 0.03 and 0 <= err_lc["coverage"] <= 1
# the mixture-of-draws mean equals the mean of per-draw tables
pi_d, Psi_d, _ = _latent(lc_small.details["fit"])
pi_d, Psi_d = pi_d.reshape(-1, 2), Psi_d.reshape(-1, 2, 4, 2)
kept = np.unique(np.linspace(0, pi_d.shape[0] - 1, min(300, pi_d.shape[0])).astype(int))
per_draw = np.mean([table_probs(pi_d[i] / pi_d[i].sum(), Psi_d[i], (2,) * 4) for i in kept], axis=0)
assert lc_small.details["draws_in_mean"] == kept.size and np.abs(per_draw - lc_small.table).max() < 1e-12
assert all_pairs(3) == [(0, 1), (0, 2), (1, 2)]
for bad in [np.ones((2, 2, 2, 2)), truth_small[:1]]:
    try:
        estimate_errors(lc_small, bad)
    except ValueError as err:
        assert "truth" in str(err)
    else:
        raise AssertionError("bad truth accepted")
