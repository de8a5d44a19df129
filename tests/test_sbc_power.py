"""Simulation-based calibration of whole samplers, sized to catch moderate planted bugs (issue 32, items 1-2).

Each sampler runs as a user runs it (its public function, one short thinned chain per replicate) on data simulated
from its own model, with the parameters drawn from its prior (Talts et al. 2018). For an exact sampler the rank of a
monitored quantity's true value among ``L = 19`` posterior draws is uniform on ``0..19``. :func:`sbc_check` judges
the ranks at family level ``ALPHA = 0.01`` (:func:`dplit.testing.sbc_check`) by a weighted Bonferroni over three tests:

- **spread** (weight 1/2): the Klotz score ``Phi^-1((r + 1/2) / (L + 1))^2``, summed over the coordinates that the
  noise informs, against its exact null mean (a z-test; the null variance is exact per coordinate, combined with the
  coordinates' observed correlations). A posterior too narrow (noise scale too small, budget too large, draws still
  autocorrelated) puts the truth in its tails and raises the score; one too wide puts the truth in its middle and
  lowers it. This is the test with power against the moderate errors below; the chi-square of rank histograms
  alone had little (issue 32).
- **location** (weight 1/4, split over the coordinates): the mean van der Waerden score ``Phi^-1((r + 1/2) / (L + 1))``
  of each coordinate, for a biased sampler.
- **shape** (weight 1/4, split over the coordinates): the chi-square of 10 bins of ranks
  (:func:`dplit.testing.rank_uniformity_pvalues`).

The planted errors are made outside dplit, as a user's mistake would be: the data are generated with one noise scale
or budget and the sampler is given a release (or a ``priv_f``) that claims another. Each case's size (replicates,
chain lengths) is the one at which ``benchmarks/power_sbc.py`` measured the power and the false-alarm rate over 20+
independent seeds (``benchmarks/results/power_sbc.json``); the tests run that size at fixed seeds.
"""

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy import special, stats

from dplit.testing import sbc_check, sbc_ranks

ALPHA = 0.01          # family level of one SBC check (all its tests and coordinates)
L = 19                # posterior draws per replicate: ranks 0..19


# ---------------------------------------------------------------- the cases
@dataclass
class Case:
    """One sampler's SBC: its model, its public sampler, the planted errors (arms) and the size CI runs.

    ``posterior(data, L, rng, told)`` runs the sampler on ``data`` with the arm's value ``told`` (1 = the truth;
    a planted arm tells the sampler a wrong noise scale or budget) and returns ``(L, p)`` draws of the monitored
    quantities; ``simulate(rng)`` returns ``(theta, data)``, theta the ``p`` monitored quantities.
    """

    name: str
    simulate: object
    posterior: object
    spread: list
    n_rep: int
    arms: dict                      # arm -> told; "genuine" first
    ci_arms: tuple                  # the arms the tests assert: genuine, and planted ones of measured power >= 0.95
    seed: int
    settings: dict = field(default_factory=dict)
    planted: str = "the sampler is told {told} times the true noise parameter"

    def ranks(self, arm="genuine", *, seed=None, n_rep=None):
        """SBC ranks of one arm (``seed``, ``n_rep`` default to the CI's)."""
        told = self.arms[arm]
        return sbc_ranks(self.simulate, lambda data, n, g: self.posterior(data, n, g, told),
                         self.n_rep if n_rep is None else n_rep, L=L, rng=self.seed if seed is None else seed)

    def describe(self, told):
        """The planted error of an arm, in words."""
        return self.planted.format(told=told)

    def check(self, arm="genuine", *, seed=None):
        """:func:`sbc_check` of one arm at the CI's size, with the ranks under ``"ranks"``."""
        ranks = self.ranks(arm, seed=seed)
        return dict(sbc_check(ranks, self.spread, L=L), ranks=ranks)


def _quiet(fn, *args, **kwargs):
    """A sampler call with its convergence warnings silenced (one short chain per replicate by design)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _dirichlet_functions(alpha):
    """Monitored functions of Dirichlet alpha (k, d=2): E[log x_1], E[log x_2] (what S_0 measures), log alpha_0."""
    alpha = np.atleast_2d(alpha)
    a0 = alpha.sum(axis=1, keepdims=True)
    return np.column_stack([special.digamma(alpha) - special.digamma(a0), np.log(a0)])


# a. DPMCMC: d = 2 Dirichlet records, n = 15, a = 0.01, eps = 5 (Laplace scale 0.123, sd 0.17), prior Gamma(1, 0.01):
# alpha ~ 100, concentrated records, so the spread of S_0 (about 0.03) is small against the noise, whose scale the
# planted errors change (in a pilot this prior gave the x1.3 error more power than p1 at n = 30). Chains: 100 warm-up
# iterations, 5 slice cycles, thin 10. Monitored: E[log x_1], E[log x_2] (spread test) and log alpha_0.
MCMC = dict(n=15, d=2, a=1e-2, eps=5.0, prior_rate=0.01, n_warmup=100, thin=10, n_slice=5)


def _mcmc_case():
    from dplit.mcmc import dp_mcmc
    from dplit.priors import GammaPrior
    from dplit.release import Release

    s = MCMC
    prior = GammaPrior(1.0, s["prior_rate"], d=s["d"])
    scale = -s["d"] * math.log(s["a"]) / (s["n"] * s["eps"])

    def simulate(g):
        alpha = g.gamma(1.0, 1.0 / s["prior_rate"], s["d"])
        x = g.dirichlet(alpha, s["n"])
        s_L = np.log(np.maximum(x, s["a"])).mean(axis=0) + g.laplace(0.0, scale, s["d"])
        return _dirichlet_functions(alpha)[0], s_L

    def posterior(s_L, n_draws, g, told):
        # the release claims a Laplace scale `told` times the true one (eps / told); planted arms skip the
        # plausibility check, which is not what they test
        rel = Release.from_statistic(s_L, s["n"], s["a"], s["eps"] / told, check=told == 1.0)
        res = _quiet(dp_mcmc, rel, prior=prior, n_iter=n_draws * s["thin"], n_warmup=s["n_warmup"], n_chains=1,
                     thin=s["thin"], n_slice=s["n_slice"], rng=g, progress=False, n_jobs=1)
        return _dirichlet_functions(res.posterior["alpha"].values[0])

    return Case("dp_mcmc", simulate, posterior, spread=[0, 1], n_rep=600,
                arms={"genuine": 1.0, "scale x0.7": 0.7, "scale x1.3": 1.3}, ci_arms=("genuine", "scale x0.7"),
                seed=101, settings=s, planted="the Release claims eps / {told}: the sampler assumes a Laplace scale "
                "{told} x the one the data were drawn with")


# b. dapper: a normal mean, theta ~ N(0, tau^2), records x_i ~ N(theta, 1), the mean released with Laplace noise of
# scale b; post_f is the conjugate draw. The noise is most of the posterior's spread (noise variance 2 b^2 against
# 1 / n_rec), which makes the data augmentation slow to forget, hence the long thinning; the compiled engine makes it
# cheap, the Python engine gets a smaller noise and shorter chains. Chains start at the release (init_par = sdp).
DAPPER = {"numba": dict(n_rec=5, tau=15.0, b=2.0, n_warmup=600, thin=250),
          "python": dict(n_rec=5, tau=6.0, b=0.7, n_warmup=100, thin=25)}


def _dapper_model(engine, told):
    """The PrivacyModel of the normal-mean case, its priv_f told a Laplace scale ``told`` times the true one."""
    from numba import njit

    from dplit.augmentation import PrivacyModel

    s = DAPPER[engine]
    n_rec, prec, b = s["n_rec"], s["n_rec"] + 1.0 / s["tau"] ** 2, s["b"] * told
    if engine == "python":
        def latent(theta, rng):
            return theta[0] + rng.standard_normal((n_rec, 1))

        def post(dmat, theta, rng):
            return np.array([dmat.sum() / prec + rng.standard_normal() / math.sqrt(prec)])

        def priv(sdp, sx):
            return -abs(sdp - sx) / b

        def st(xi, sdp, i):
            return xi[0] / n_rec
    else:
        @njit
        def latent(theta, rng):
            out = np.empty((n_rec, 1))
            for i in range(n_rec):
                out[i, 0] = theta[0] + rng.standard_normal()
            return out

        @njit
        def post(dmat, theta, rng):
            return np.array([dmat.sum() / prec + rng.standard_normal() / math.sqrt(prec)])

        @njit
        def priv(sdp, sx):
            return -abs(sdp - sx) / b

        @njit
        def st(xi, sdp, i):
            return xi[0] / n_rec
    return PrivacyModel(latent, post, priv, st, 1, ["mu"])


def _dapper_case(engine):
    from dplit.augmentation import dapper_sample

    s = DAPPER[engine]
    models = {}

    def simulate(g):
        theta = g.normal(0.0, s["tau"])
        return np.array([theta]), g.normal(theta, 1.0, s["n_rec"]).mean() + g.laplace(0.0, s["b"])

    def posterior(sdp, n_draws, g, told):
        if told not in models:                 # compile once per arm
            models[told] = _dapper_model(engine, told)
        res = _quiet(dapper_sample, models[told], sdp, [sdp], n_iter=n_draws * s["thin"], n_warmup=s["n_warmup"],
                     n_chains=1, thin=s["thin"], rng=g, progress=False, n_jobs=1, engine=engine)
        return res.posterior["mu"].values[0][:, None]

    ci = {"numba": ("genuine", "scale x0.7", "scale x1.3"), "python": ("genuine", "scale x0.7")}[engine]
    return Case(f"dapper_{engine}", simulate, posterior, spread=[0], n_rep={"numba": 600, "python": 500}[engine],
                arms={"genuine": 1.0, "scale x0.7": 0.7, "scale x1.3": 1.3}, ci_arms=ci,
                seed={"numba": 102, "python": 103}[engine], settings=dict(s, engine=engine),
                planted="priv_f uses a Laplace scale {told} x the one the release was drawn with")


# c. fit_nested, paper=True: the model the sampler targets (its composite likelihood: the five counts
# S_i ~ Binomial(n, P_i) independently, P = summary_probs(theta), every simplex of theta ~ Dirichlet(1)),
# n = 40 households, G = M = 2 classes, 2 races and 2 relationships, eps = 2 (two-sided geometric noise, sd 3.5 per
# count against a binomial sd up to 3.2). The planted errors: a SummaryRelease claiming twice or half the budget the
# noise was drawn with. Thinning by 10 after 300 warm-up iterations left the draws autocorrelated (false alarms 3/20,
# pooled spread z = +5.9 over 4000 replicates, gone at thinning 100: z = +1.7 and -2.3 at 600 and 800 replicates);
# 50 after 1000 is calibrated. The default prior (a = 0.25) runs the same kernel with another constant.
NESTED = dict(n=40, eps=2.0, G=2, M=2, n_race=2, n_rel=2, n_warmup=1000, thin=50)


def _nested_case():
    from dplit.nested import NestedParams, SummaryRelease, fit_nested, summary_probs

    s = NESTED

    def simulate(g):
        P = summary_probs(NestedParams.random(s["G"], s["M"], s["n_race"], s["n_rel"], rng=g))
        t = math.exp(-s["eps"] / 5)
        noisy = g.binomial(s["n"], P) + g.geometric(1 - t, 5) - g.geometric(1 - t, 5)
        return P, noisy

    def posterior(noisy, n_draws, g, told):
        rel = SummaryRelease(counts=noisy, n=s["n"], eps=s["eps"] * told, n_race=s["n_race"], n_rel=s["n_rel"],
                             checked=told == 1.0)
        res = _quiet(fit_nested, rel, G=s["G"], M=s["M"], paper=True, n_iter=n_draws * s["thin"],
                     n_warmup=s["n_warmup"], n_chains=1, thin=s["thin"], rng=g, progress=False, n_jobs=1)
        return res.posterior["summary_probs"].values[0]

    return Case("fit_nested", simulate, posterior, spread=list(range(5)), n_rep=150,
                arms={"genuine": 1.0, "eps x2": 2.0, "eps x0.5": 0.5}, ci_arms=("genuine", "eps x2"), seed=104,
                settings=s, planted="the SummaryRelease claims {told} x the budget its noise was drawn with")


# d. DPapprox: its own model (6), S_0 ~ N(mu_alpha, Sigma_alpha / n) with the Dirichlet moments of log x, plus Laplace
# noise, d = 2. Blocked: n = 1000, eps = 0.1 (Laplace scale 0.092 against a CLT sd of S_0 below 0.01), prior
# Gamma(1, 0.01). Gibbs (the paper's update) forgets slowly when the noise dominates (S_0 is the augmented variable),
# so it gets p1 (Gamma(1, 0.1)), n = 200, eps = 0.5 (the same scale, a CLT sd of S_0 about 0.02), thinning by 200
# and 600 replicates (at 300 and 400 the 0.7x scale was caught in 18/20 seeds). Model (6)'s S_0 is not a censored
# mean, so the release's plausibility check (derived for one) is off in every arm.
APPROX = {"blocked": dict(n=1000, d=2, a=1e-2, eps=0.1, prior_rate=0.01, n_warmup=200, thin=20),
          "gibbs": dict(n=200, d=2, a=1e-2, eps=0.5, prior_rate=0.1, n_warmup=1000, thin=200)}


def _approx_case(update):
    from dplit.approx import dp_approx
    from dplit.priors import GammaPrior
    from dplit.release import Release

    s = APPROX[update]
    prior = GammaPrior(1.0, s["prior_rate"], d=s["d"])
    scale = -s["d"] * math.log(s["a"]) / (s["n"] * s["eps"])

    def simulate(g):
        alpha = g.gamma(1.0, 1.0 / s["prior_rate"], s["d"])
        mean = special.digamma(alpha) - special.digamma(alpha.sum())
        cov = np.diag(special.polygamma(1, alpha)) - special.polygamma(1, alpha.sum())
        s0 = g.multivariate_normal(mean, cov / s["n"])
        return _dirichlet_functions(alpha)[0], s0 + g.laplace(0.0, scale, s["d"])

    def posterior(s_L, n_draws, g, told):
        rel = Release.from_statistic(s_L, s["n"], s["a"], s["eps"] / told, check=False)
        res = _quiet(dp_approx, rel, prior=prior, update=update, n_iter=n_draws * s["thin"], n_warmup=s["n_warmup"],
                     n_chains=1, thin=s["thin"], rng=g, progress=False, n_jobs=1)
        return _dirichlet_functions(res.posterior["alpha"].values[0])

    return Case(f"dp_approx_{update}", simulate, posterior, spread=[0, 1], n_rep={"blocked": 300, "gibbs": 600}[update],
                arms={"genuine": 1.0, "scale x0.7": 0.7, "scale x1.3": 1.3}, ci_arms=("genuine", "scale x0.7"),
                seed={"blocked": 105, "gibbs": 106}[update], settings=dict(s, update=update),
                planted="the Release claims eps / {told}: the sampler assumes a Laplace scale {told} x the one the "
                "data were drawn with")


# e. fit_latent_class, paper=True: model (7), pi ~ Dirichlet(1 / k), every Psi[h, j] ~ Dirichlet(1), each released
# table's counts Multinomial(n, its cell probabilities), two-sided geometric noise per cell (sensitivity 2, eps / 3
# per table); three binary variables, their three 2-way margins, k = 2, n = 100, eps = 1 (noise sd 6.3 per cell).
# The latent counts mix slowly under that noise, hence the thinning by 100. Only weight = 1 makes the composite
# likelihood a generative model that SBC can simulate from; the defaults (weight "auto", a = 0.1) change two
# constants of the same kernel.
LCM = dict(levels=(2, 2, 2), margins=((0, 1), (0, 2), (1, 2)), k=2, n=100, eps=1.0, n_warmup=1000, thin=100)


def _lcm_case():
    from dplit.latent_class import MarginRelease, fit_latent_class, marginal_probs

    s = LCM
    levels, margins, k = s["levels"], s["margins"], s["k"]

    def simulate(g):
        pi = g.dirichlet(np.full(k, 1.0 / k))
        pi = np.maximum(pi, 1e-12)
        pi /= pi.sum()
        Psi = np.stack([[g.dirichlet(np.ones(2)) for _ in levels] for _ in range(k)])
        P = marginal_probs(pi, Psi, levels, margins)
        t = math.exp(-s["eps"] / (len(margins) * 2.0))
        noisy = tuple(g.multinomial(s["n"], p / p.sum()) + g.geometric(1 - t, p.size) - g.geometric(1 - t, p.size)
                      for p in P)
        return np.concatenate(P), noisy

    def posterior(noisy, n_draws, g, told):
        rel = MarginRelease(margins=margins, levels=levels, n=s["n"], eps=s["eps"] * told, counts=noisy,
                            checked=told == 1.0)
        res = _quiet(fit_latent_class, rel, k=k, paper=True, n_iter=n_draws * s["thin"], n_warmup=s["n_warmup"],
                     n_chains=1, thin=s["thin"], rng=g, progress=False, n_jobs=1)
        return res.posterior["margin_probs"].values[0]

    return Case("fit_latent_class", simulate, posterior, spread=list(range(12)), n_rep=150,
                arms={"genuine": 1.0, "eps x2": 2.0, "eps x0.5": 0.5}, ci_arms=("genuine", "eps x2", "eps x0.5"),
                seed=107,
                settings=s, planted="the MarginRelease claims {told} x the budget its noise was drawn with")


# f. DPABC's simulator. Rejection ABC is not exact at a positive tolerance, so an SBC of dp_abc would fail for an
# honest reason; what DPABC adds to the checked pieces is its simulator, dplit.abc.simulate_releases (compiled,
# records never stored, logs taken once every k records). It is compared with an independent NumPy simulation of the
# release's law (Dirichlet records, censored at a, column means of the logs, Laplace noise) by two-sample KS tests,
# one per (alpha, coordinate), Bonferroni at ALPHA. Two alphas: one with components below 1 (heavy censoring), one
# concentrated; n = 20 records, eps = 1 (Laplace scale 0.46: the noise dominates). The planted errors: the simulator
# given a Laplace scale 0.7 or 1.3 times the release's, or no censoring (a = 1e-300, the censoring term dropped).
ABC = dict(alphas=((0.5, 2.0), (20.0, 30.0)), n=20, a=1e-2, eps=1.0, n_sim=20_000)


@dataclass
class SimulatorCase:
    """A two-sample check of DPABC's simulator against an independent simulation (same interface as Case)."""

    name: str
    arms: dict
    ci_arms: tuple
    seed: int
    settings: dict
    n_rep: int = ABC["n_sim"]
    planted: str = "simulate_releases is given a Laplace scale {told} x the release's"

    def describe(self, told):
        """The planted error of an arm, in words."""
        if told == "uncensored":
            return "simulate_releases is given a = 1e-300 instead of the release's a = 0.01: no censoring"
        return self.planted.format(told=told)

    def check(self, arm="genuine", *, seed=None):
        from dplit.abc import simulate_releases

        s, told = self.settings, self.arms[arm]
        g = np.random.default_rng(self.seed if seed is None else seed)
        d = len(s["alphas"][0])
        scale = -d * math.log(s["a"]) / (s["n"] * s["eps"])
        scale_told, a_told = (scale, 1e-300) if told == "uncensored" else (scale * told, s["a"])
        pvals = []
        for alpha in s["alphas"]:
            alpha = np.asarray(alpha, dtype=float)
            sim = simulate_releases(np.tile(alpha, (s["n_sim"], 1)), [s["n"]], [scale_told], a_told, rng=g,
                                    n_jobs=1)
            x = g.dirichlet(alpha, (s["n_sim"], s["n"]))
            ref = np.log(np.maximum(x, s["a"])).mean(axis=1) + g.laplace(0.0, scale, (s["n_sim"], d))
            pvals += [stats.ks_2samp(sim[:, j], ref[:, j]).pvalue for j in range(d)]
        return {"p": min(1.0, len(pvals) * min(pvals)), "p_ks": pvals}


def _abc_case():
    return SimulatorCase("dp_abc_simulator", arms={"genuine": 1.0, "scale x0.7": 0.7, "scale x1.3": 1.3,
                                                   "censoring dropped": "uncensored"},
                         ci_arms=("genuine", "scale x0.7", "scale x1.3", "censoring dropped"), seed=108,
                         settings=ABC)


CASES = {"dp_mcmc": _mcmc_case,
         "dapper_numba": lambda: _dapper_case("numba"),
         "dapper_python": lambda: _dapper_case("python"),
         "fit_nested": _nested_case,
         "dp_approx_blocked": lambda: _approx_case("blocked"),
         "dp_approx_gibbs": lambda: _approx_case("gibbs"),
         "fit_latent_class": _lcm_case,
         "dp_abc_simulator": _abc_case}


def get_case(name):
    """The Case of a sampler by name (built on demand: imports stay lazy)."""
    return CASES[name]()


# ---------------------------------------------------------------- the check itself (fast)
def _exact_normal_ranks(n_rep, rng, sd_factor=1.0, rho=0.6):
    """SBC ranks of an exact (sd_factor = 1) conjugate sampler of a correlated 3-d normal model, vectorised."""
    cov = rho * np.ones((3, 3)) + (1 - rho) * np.eye(3)
    theta = rng.multivariate_normal(np.zeros(3), cov, n_rep)
    y = theta + rng.standard_normal((n_rep, 3))                 # y | theta ~ N(theta, I)
    post_cov = np.linalg.inv(np.linalg.inv(cov) + np.eye(3))
    mean = y @ post_cov.T
    draws = mean[:, None, :] + sd_factor * rng.multivariate_normal(np.zeros(3), post_cov, (n_rep, L))
    return (draws < theta[:, None, :]).sum(axis=1)


def test_the_check_keeps_its_level_on_an_exact_sampler():
    rng = np.random.default_rng(0)
    p = np.array([sbc_check(_exact_normal_ranks(300, rng), spread=[0, 1, 2])["p"] for _ in range(400)])
    assert (p < ALPHA).sum() <= 10             # binomial(400, 0.01): mean 4, P(> 10) < 0.003
    assert (p < 0.1).mean() < 0.2              # a conservative check is fine, an anti-conservative one is not


@pytest.mark.parametrize("sd_factor", [0.8, 1.25])
def test_the_check_catches_a_posterior_off_by_a_quarter(sd_factor):
    rng = np.random.default_rng(1)
    p = np.array([sbc_check(_exact_normal_ranks(300, rng, sd_factor), spread=[0, 1, 2])["p"] for _ in range(50)])
    assert (p < ALPHA).mean() >= 0.9


def test_the_check_refuses_bad_ranks():
    with pytest.raises(ValueError, match="ranks"):
        sbc_check(np.full((100, 2), L + 1), spread=[0])
    with pytest.raises(ValueError, match="ranks"):
        sbc_check(np.zeros((10, 2), dtype=int), spread=[0])


# ---------------------------------------------------------------- the samplers (slow)
def _ci_params():
    return [pytest.param(name, arm, id=f"{name}-{arm}") for name in CASES for arm in get_case(name).ci_arms]


@pytest.mark.slow
@pytest.mark.parametrize("name, arm", _ci_params())
def test_sbc_of_whole_sampler(name, arm):
    case = get_case(name)
    res = case.check(arm)
    res.pop("ranks", None)
    if arm == "genuine":
        assert res["p"] >= ALPHA, res
    else:
        assert res["p"] < ALPHA, res
