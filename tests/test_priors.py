"""Tests of dplit.priors: p1-p5, the copula, gamma fitting, pickling and make_prior."""

import pickle

import numpy as np
import pytest
from scipy import stats

from dplit.dirichlet import dirichlet_draws
from dplit.priors import (
    DrawsPrior,
    GammaPrior,
    GaussianCopulaPrior,
    NoDensityError,
    Prior,
    fit_gamma,
    fit_gammas,
    make_prior,
    normal_scores_correlation,
    p2_draws,
)
from dplit.release import Release, release

ALPHA = np.array([2.2, 3.3, 4.4])
CANDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
R = np.array([[1.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 1.0]])


@pytest.fixture(scope="module")
def split_release():
    g = np.random.default_rng(1)
    return release(dirichlet_draws(ALPHA, 4000, rng=g), eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, n1=1000, rng=g, secure=False)


@pytest.fixture(scope="module")
def p2_sample(split_release):
    return p2_draws(split_release, 2000, rng=2)


def test_p1_defaults_law_and_density():
    p1 = make_prior("p1", d=3)
    assert isinstance(p1, GammaPrior) and isinstance(p1, Prior) and p1.name == "p1" and p1.has_density
    x = p1.sample(5000, 1)
    assert x.shape == (5000, 3)
    assert min(stats.kstest(x[:, j], stats.gamma(1, scale=10).cdf).pvalue for j in range(3)) > 1e-3
    assert stats.kstest(x[:, 0], stats.gamma(1, scale=8).cdf).pvalue < 1e-6
    pts = np.array([[1.0, 2.0, 3.0], [0.1, 40.0, 5.0]])
    assert np.allclose(p1.logpdf(pts), stats.gamma(1, scale=10).logpdf(pts).sum(axis=1))
    assert p1.logpdf([1.0, 0.0, 1.0]) == -np.inf
    assert "Gamma(shape=1, rate=0.1)" in p1.describe()


def test_gamma_prior_rejects_bad_parameters():
    with pytest.raises(ValueError, match="d is required"):
        GammaPrior(1.0, 0.1)
    with pytest.raises(ValueError, match="shape"):
        GammaPrior(-1.0, 0.1, d=3)
    with pytest.raises(ValueError, match="rate"):
        GammaPrior([1.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="alpha must have shape"):
        GammaPrior(d=3).logpdf(np.ones(4))


def test_fit_gamma_matches_scipy_and_recovers_parameters():
    y = np.random.default_rng(3).gamma(3.7, 1 / 0.6, size=20000)
    v, w = fit_gamma(y)
    v_sp, _, scale = stats.gamma.fit(y, floc=0)
    assert np.isclose(v, v_sp, rtol=1e-4) and np.isclose(w, 1 / scale, rtol=1e-4)
    assert abs(v - 3.7) < 0.15 and abs(w - 0.6) < 0.03
    shapes, rates = fit_gammas(np.random.default_rng(4).gamma([2.0, 50.0], 1.0, size=(20000, 2)))
    assert np.allclose(shapes, [2.0, 50.0], rtol=0.05) and np.allclose(rates, 1.0, rtol=0.05)
    for shape in (200.0, 0.05):          # very peaked and very skewed samples: Newton from Minka's start converges
        v_big, _ = fit_gamma(np.random.default_rng(5).gamma(shape, 1.0, size=20000))
        assert abs(v_big / shape - 1) < 0.1, (shape, v_big)
    with pytest.raises(ValueError, match="constant"):
        fit_gamma(np.full(10, 2.0))
    with pytest.raises(ValueError, match="> 0"):
        fit_gamma([1.0, -2.0, 3.0])


def test_draws_prior_samples_its_rows_and_has_no_density():
    pool = np.random.default_rng(5).gamma(2.0, 1.0, size=(300, 3))
    pool[3, 0] = np.nan
    p = DrawsPrior(pool, name="p5", source="test")
    assert p.n_dropped == 1 and p.d == 3 and not p.has_density
    x = p.sample(1000, 6)
    assert set(map(tuple, x)) <= set(map(tuple, p.draws))
    with pytest.raises(NoDensityError, match="p5"):
        p.logpdf(np.ones(3))
    assert issubclass(NoDensityError, NotImplementedError)
    with pytest.raises(ValueError, match="> 0"):
        DrawsPrior(-np.ones((5, 2)))


def test_copula_marginals_correlation_and_density():
    shape, rate = np.array([4.0, 9.0, 2.5]), np.array([1.0, 0.5, 2.0])
    cop = GaussianCopulaPrior(shape, rate, R)
    x = cop.sample(20000, 7)
    assert min(stats.kstest(x[:, j], cop.marginal(j).cdf).pvalue for j in range(3)) > 1e-3
    assert np.abs(normal_scores_correlation(x) - R).max() < 0.04
    z = stats.norm.ppf(stats.gamma.cdf(x[:4], shape, scale=1 / rate))
    direct = (stats.multivariate_normal(np.zeros(3), R).logpdf(z) - stats.norm.logpdf(z).sum(axis=1)
              + stats.gamma.logpdf(x[:4], shape, scale=1 / rate).sum(axis=1))
    assert np.allclose(cop.logpdf(x[:4]), direct)
    # it is a density: E_p3[pi4 / pi3] = 1
    y = GammaPrior(shape, rate).sample(20000, 8)
    wgt = np.exp(cop.logpdf(y) - GammaPrior(shape, rate).logpdf(y))
    assert abs(wgt.mean() - 1) < 5 * wgt.std() / np.sqrt(len(wgt))
    # with R = I the copula is the independent gammas; far in the tails the density stays finite
    indep = GaussianCopulaPrior(shape, rate, np.eye(3))
    assert np.allclose(indep.logpdf(x[:20]), GammaPrior(shape, rate).logpdf(x[:20]))
    assert np.isfinite(cop.logpdf([200.0, 1e-8, 50.0]))
    # a wrong correlation is visible
    assert np.abs(normal_scores_correlation(x) - np.eye(3)).max() > 0.5
    with pytest.raises(ValueError, match="positive definite"):
        GaussianCopulaPrior(shape, rate, [[1, 2, 0], [2, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="unit diagonal"):
        GaussianCopulaPrior(shape, rate, 2 * np.eye(3))


def test_p2_to_p4_from_a_release(split_release, p2_sample):
    priors = {name: make_prior(name, split_release, draws=p2_sample) for name in ("p2", "p3", "p4")}
    p2, p3, p4 = priors["p2"], priors["p3"], priors["p4"]
    assert isinstance(p2, DrawsPrior) and isinstance(p3, GammaPrior) and isinstance(p4, GaussianCopulaPrior)
    assert [p.name for p in priors.values()] == ["p2", "p3", "p4"]
    # p3 is the ML gamma fit to the p2 sample
    v, w = fit_gammas(p2.draws)
    assert np.allclose(p3.shape, v) and np.allclose(p3.rate, w)
    # p4: marginals pass GOF against p3's gammas, rank correlation matches p2's
    x4 = p4.sample(8000, 9)
    assert min(stats.kstest(x4[:, j], p3.marginal(j).cdf).pvalue for j in range(3)) > 1e-3
    iu = np.triu_indices(3, 1)
    rho2 = stats.spearmanr(p2.draws).statistic[iu]
    rho4 = stats.spearmanr(x4).statistic[iu]
    rho3 = stats.spearmanr(p3.sample(8000, 10)).statistic[iu]
    assert np.all(np.abs(rho4 - rho2) < 0.05)
    assert np.max(np.abs(rho3 - rho2)) > 0.3  # the independent p3 misses p2's dependence
    with pytest.raises(NoDensityError):
        p2.logpdf(np.ones(3))
    assert np.isfinite(p4.logpdf(p2.draws[:10])).all()


def test_make_prior_runs_dpboots_when_no_draws_given(split_release):
    p2 = make_prior("p2", split_release, n_draws=100, rng=11)
    again = make_prior("p2", split_release, n_draws=100, rng=11)
    assert p2.draws.shape[1] == 3 and np.array_equal(p2.draws, again.draws)
    assert "DPBoots" in p2.describe()


def test_make_prior_bad_input(split_release):
    unsplit = Release.from_statistic(split_release.s_L, 4000, split_release.a, 0.75)
    with pytest.raises(ValueError, match="name must be"):
        make_prior("p6", split_release)
    with pytest.raises(ValueError, match="split release"):
        make_prior("p3", unsplit)
    with pytest.raises(ValueError, match="release="):
        make_prior("p2")
    with pytest.raises(ValueError, match="d="):
        make_prior("p1")
    with pytest.raises(TypeError, match="release"):
        make_prior("p4", {"s_L1": [0, 0, 0]})
    assert make_prior("p1", unsplit).d == 3


def test_p5_is_drawn_by_dplit_mcmc(split_release):
    from dplit.mcmc import p5_prior
    p5 = p5_prior(split_release, rng=1, n_draws=200, n_warmup=200, n_chains=1, thin=2)
    assert isinstance(p5, DrawsPrior) and p5.name == "p5" and not p5.has_density and p5.d == 3
    assert p5.draws.shape == (200, 3)  # n_draws reaches the p5 sampler
    draws = p5.sample(500, 2)
    assert draws.shape == (500, 3) and np.all(draws > 0)
    with pytest.raises(NotImplementedError, match="no density"):
        p5.logpdf(np.ones(3))
    with pytest.raises(NoDensityError):
        p5.kernel_form()


def test_make_prior_p5_points_to_dplit_mcmc(split_release):
    # priors sits below the samplers (dplit.LAYERS): it does not import dplit.mcmc, even lazily
    with pytest.raises(ValueError, match="dplit.mcmc.p5_prior"):
        make_prior("p5", split_release, rng=1)


def test_kernel_density_equals_logpdf_for_every_prior_kind(split_release, p2_sample):
    from dplit.mcmc import p5_prior
    from dplit.priors import PRIOR_COPULA, PRIOR_GAMMA, kernel_logpdf

    priors = {"p1": make_prior("p1", d=3)}
    priors.update({n: make_prior(n, split_release, draws=p2_sample) for n in ("p2", "p3", "p4")})
    priors["p5"] = p5_prior(split_release, rng=1, n_draws=50, n_warmup=100, n_chains=1, thin=1)
    priors["copula"] = GaussianCopulaPrior([4.0, 9.0, 2.5], [1.0, 0.5, 2.0], R)
    kinds = {"p1": PRIOR_GAMMA, "p3": PRIOR_GAMMA, "p4": PRIOR_COPULA, "copula": PRIOR_COPULA}
    for name, prior in priors.items():
        if name in ("p2", "p5"):     # known through draws: no density, no kernel form
            with pytest.raises(NoDensityError):
                prior.kernel_form()
            continue
        form = prior.kernel_form()
        assert form.kind == kinds[name]
        pts = np.vstack([prior.sample(40, 3), prior.sample(5, 4) * 10, prior.sample(5, 5) / 10])
        got = np.array([kernel_logpdf(form, a) for a in pts])
        assert np.allclose(got, prior.logpdf(pts), rtol=1e-10, atol=1e-8), name
        assert kernel_logpdf(form, -pts[0]) == -np.inf


def test_a_prior_without_a_kernel_form_is_refused_not_guessed():
    class MyPrior(Prior):
        """A user's prior with a density but no kernel form."""
        has_density = True

        def _logpdf(self, alpha):
            return -alpha.sum(axis=1)

    mine = MyPrior(3, name="mine")
    assert np.isclose(mine.logpdf([1.0, 2.0, 3.0]), -6.0)
    with pytest.raises(TypeError, match="no kernel form"):
        mine.kernel_form()


def test_priors_are_picklable(split_release, p2_sample):
    priors = [make_prior("p1", d=3)] + [make_prior(n, split_release, draws=p2_sample) for n in ("p2", "p3", "p4")]
    priors.append(DrawsPrior(p2_sample[:50], name="p5", source="stand-in"))
    for p in priors:
        q = pickle.loads(pickle.dumps(p))
        assert type(q) is type(p) and q.name == p.name and q.d == p.d
        assert np.array_equal(q.sample(20, 12), p.sample(20, 12))
        if p.has_density:
            pts = p.sample(4, 13)
            assert np.allclose(q.logpdf(pts), p.logpdf(pts))
        else:
            with pytest.raises(NoDensityError):
                q.logpdf(np.ones(3))
