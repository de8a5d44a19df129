"""Tests of dplit.mcmc (and the model of a release it reads, dplit._release_model): kernels against their twins,
stationary laws, SBC, limits, results, bad input."""

import numpy as np
import pytest
from _helpers import noisy_release as _release
from scipy import integrate, special, stats

from dplit import _mcmc_moves as MV
from dplit import _mcmc_moves as moves
from dplit import _release_model as RM
from dplit import mcmc as M
from dplit.dirichlet import censored_stat, dirichlet_draws, sufficient_stat
from dplit.priors import GammaPrior
from dplit.sampling import mpsrf
from dplit.testing import py_func

FAST = dict(n_iter=1_000, n_warmup=300, n_chains=2, thin=2, progress=False)




def _mean_and_se(result):
    """Posterior mean of alpha and its Monte Carlo standard error (ArviZ ESS)."""
    import arviz as az
    summ = az.summary(result, var_names=["alpha"])
    return summ["mean"].to_numpy(), summ["mcse_mean"].to_numpy()


# ---------------------------------------------------------------- the prior's kernel form
class _NotAPrior:
    """An object with gamma-like attributes but not a dplit Prior: no kernel form is guessed from it."""

    name, shape, rate = "impostor", 1.0, 0.1

    def logpdf(self, alpha):
        return 0.0


def test_only_priors_with_a_kernel_form_are_accepted():
    from dplit.priors import PRIOR_GAMMA, GammaPrior, Prior

    form = RM.kernel_form_of(GammaPrior(2.0, [0.5, 1.0, 2.0]), 3)
    assert form.kind == PRIOR_GAMMA and np.allclose(form.shape, 2.0) and np.allclose(form.rate, [0.5, 1.0, 2.0])
    with pytest.raises(TypeError, match="dplit.priors.Prior"):
        RM.kernel_form_of(_NotAPrior(), 3)

    class Mine(Prior):
        has_density = True

        def _logpdf(self, alpha):
            return -alpha.sum(axis=1)

    rel, _ = _release(n=60, seed=2)
    with pytest.raises(TypeError, match="no kernel form"):
        M.dp_mcmc(rel, prior=Mine(3, name="mine"), **FAST)
    with pytest.raises(ValueError, match="d = 2 components"):
        M.dp_mcmc(rel, prior=GammaPrior(1.0, 0.1, d=2), **FAST)


# ---------------------------------------------------------------- kernels against their twins
@pytest.mark.parametrize("alpha", [np.array([0.5, 2.2, 3.3]), np.array([2.2, 3.3, 4.4])])
def test_record_sweep_kernel_equals_reference(alpha):
    rng = np.random.default_rng(1)
    X = dirichlet_draws(alpha, 300, rng=rng)
    s_L = censored_stat(X, 1e-3) + 0.01
    for coef in (np.zeros(3), np.array([-0.3, 1.2, 2.3])):
        L1, L2 = np.log(X), np.log(X)
        k = moves.record_sweep_kernel(L1, alpha, coef, s_L, np.log(1e-3), 50.0, np.random.default_rng(5))
        r = moves.record_sweep_reference(L2, alpha, coef, s_L, np.log(1e-3), 50.0, np.random.default_rng(5))
        assert k[0] == r[0] and 0 < k[0] < 300
        assert np.allclose(L1, L2, atol=1e-12) and np.allclose(k[1], r[1]) and np.allclose(k[2], r[2])
        assert np.allclose(k[1], L1.sum(0)) and np.allclose(k[2], np.maximum(L1, np.log(1e-3)).sum(0))


def _move_case(seed=1):
    """Two blocks of latent log records, their releases and the p1 kernel form, for the move tests."""
    rng = np.random.default_rng(seed)
    alpha = np.array([0.4, 2.2, 3.3])
    logx = np.log(dirichlet_draws(alpha, 50, rng=rng))
    starts = np.array([0, 20, 50], dtype=np.int64)
    s_L = np.array([censored_stat(np.exp(logx[:20]), 1e-3), censored_stat(np.exp(logx[20:]), 1e-3) + 0.05])
    return alpha, logx, starts, s_L, np.array([30.0, 20.0]), GammaPrior(1.0, 0.1, d=3)


@pytest.mark.parametrize("steps", [(0.3, 0.0), (0.0, 0.05), (0.2, 0.03)])
def test_joint_move_kernel_equals_reference(steps):
    alpha, logx, starts, s_L, inv, p1 = _move_case()
    f = p1.kernel_form()
    dsh = np.array([0.3, 0.8, 0.9])
    accepted = 0
    for seed in range(15):
        th1, th2, y1, y2 = np.log(alpha), np.log(alpha), logx.copy(), logx.copy()
        k1 = MV.joint_move_kernel(th1, y1, starts, s_L, np.log(1e-3), inv, *steps, dsh, f.kind, f.shape, f.rate,
                                  f.prec, np.empty_like(y1), np.random.default_rng(seed))
        k2 = MV.joint_move_reference(th2, y2, starts, s_L, np.log(1e-3), inv, *steps, dsh,
                                     lambda x: float(p1.logpdf(x)), np.random.default_rng(seed))
        assert k1 == k2 and np.allclose(th1, th2, atol=1e-12) and np.allclose(y1, y2, atol=1e-10)
        assert np.allclose(special.logsumexp(y1, axis=1), 0.0, atol=1e-12)
        accepted += k1
    assert 0 < accepted < 15


@pytest.mark.parametrize("shift", [1.5, 0.0])
def test_ancillary_batch_kernel_equals_reference(shift):
    alpha, logx, starts, s_L, inv, p1 = _move_case()
    f = p1.kernel_form()
    P = np.linalg.cholesky(np.array([[0.02, 0.01, 0.01], [0.01, 0.02, 0.01], [0.01, 0.01, 0.03]])) * (shift + 0.2)
    accepted = 0
    for seed in range(15):
        th1, th2, y1, y2 = np.log(alpha + shift), np.log(alpha + shift), logx.copy(), logx.copy()
        centre = np.log(alpha + (1.0 if seed % 2 else 20.0))       # the surrogate centred near, and far off
        k1 = MV.ancillary_batch_kernel(th1, y1, starts, s_L, np.log(1e-3), inv, P, 4, centre, f.kind, f.shape,
                                       f.rate, f.prec, np.empty_like(y1), np.empty_like(y1),
                                       np.random.default_rng(seed))
        k2 = MV.ancillary_batch_reference(th2, y2, starts, s_L, np.log(1e-3), inv, P, 4, centre,
                                          lambda x: float(p1.logpdf(x)), np.random.default_rng(seed))
        assert k1 == k2 and np.allclose(th1, th2, atol=1e-12) and np.allclose(y1, y2, atol=1e-9)
        assert np.allclose(special.logsumexp(y1, axis=1), 0.0, atol=1e-12)
        accepted += k1
    assert 0 < accepted < 60


def test_sum_log_matches_the_sum_of_logs():
    rng = np.random.default_rng(3)
    for v in (rng.uniform(1e-3, 1.0, 5000), rng.uniform(1.0, 50.0, 5000), 10.0 ** rng.uniform(-150, 150, 500),
              np.r_[rng.uniform(0.5, 2.0, 100), 1e-300, 1e300, rng.uniform(1e-4, 1e4, 300)]):
        for i0, i1 in ((0, v.size), (7, v.size - 3), (5, 5)):
            want = np.log(v[i0:i1]).sum()
            assert np.isclose(MV.sum_log(v, i0, i1), want, rtol=1e-12, atol=1e-9)


def _geweke(move, n_rep, rng, N=20, d=3, a=1e-2, scale=0.1, n_moves=5):
    """alpha after n_moves of `move` alone, started from the joint law of (alpha, records, s_L) under p1."""
    form = GammaPrior(1.0, 0.1, d=d).kernel_form()
    starts = np.array([0, N], dtype=np.int64)
    out = np.empty((n_rep, d))
    for r in range(n_rep):
        al = rng.gamma(1.0, 10.0, d)
        logx = np.log(np.maximum(dirichlet_draws(al, N, rng=rng), 1e-300))
        logx -= special.logsumexp(logx, axis=1, keepdims=True)
        s_L = (np.maximum(logx, np.log(a)).mean(axis=0) + rng.laplace(0, scale, d))[None, :]
        th = np.log(al)
        for _ in range(n_moves):
            move(th, logx, starts, s_L, np.log(a), np.array([1 / scale]), form, rng)
        out[r] = np.exp(th)
    return out


def _ks_min_p(draws):
    return min(stats.kstest(draws[:, j], stats.gamma(1.0, scale=10.0).cdf).pvalue for j in range(draws.shape[1]))


def test_joint_and_ancillary_moves_keep_the_joint_law():
    # Geweke: (alpha, records, s_L) drawn from the model is a draw of the joint law; moves alone must keep alpha ~ p1
    def joint(th, y, st, s_L, la, inv, f, rng):
        MV.joint_move_kernel(th, y, st, s_L, la, inv, 0.7, 0.3, np.array([0.5, 0.7, 1.0]), f.kind, f.shape, f.rate,
                             f.prec, np.empty_like(y), rng)

    def ancillary(th, y, st, s_L, la, inv, f, rng):     # a batch of 3 proposals at one auxiliary draw
        MV.ancillary_batch_kernel(th, y, st, s_L, la, inv, 0.5 * np.eye(3), 3, np.full(3, 2.0), f.kind, f.shape,
                                  f.rate, f.prec, np.empty_like(y), np.empty_like(y), rng)

    def ancillary_wrong(th, y, st, s_L, la, inv, f, rng):   # ... without the map's Jacobian
        MV.ancillary_batch_reference(th, y, st, s_L, la, inv, 0.5 * np.eye(3), 3, np.full(3, 2.0),
                                     lambda x: float(GammaPrior(1.0, 0.1, d=3).logpdf(x)), rng, jacobian=False)

    def wrong(th, y, st, s_L, la, inv, f, rng):      # the joint move without its Jacobian
        MV.joint_move_reference(th, y, st, s_L, la, inv, 1.0, 0.0, np.ones(3),
                                lambda x: float(GammaPrior(1.0, 0.1, d=3).logpdf(x)), rng, jacobian=False)

    assert _ks_min_p(_geweke(joint, 2500, np.random.default_rng(60))) > 1e-3
    assert _ks_min_p(_geweke(ancillary, 2500, np.random.default_rng(61))) > 1e-3
    assert _ks_min_p(_geweke(wrong, 1000, np.random.default_rng(62))) < 1e-6
    assert _ks_min_p(_geweke(ancillary_wrong, 2500, np.random.default_rng(63))) < 1e-6


def test_moves_run_only_where_a_joint_law_exists():
    rel, _ = _release(n=120, seed=9)
    res = M.dp_mcmc(rel, rng=4, **FAST)
    assert float(res.sample_stats["ancillary_acceptance"].mean()) > 0.05
    re_ = M.dp_remcmc(rel, b=20, rng=4, **FAST)
    assert "ancillary_acceptance" not in re_.sample_stats and "scale_acceptance" not in re_.sample_stats
    np_ = M.mcmc(sufficient_stat(dirichlet_draws([2.0, 3.0, 4.0], 100, rng=1)), 100, rng=1, **FAST)
    assert "ancillary_acceptance" not in np_.sample_stats


def test_slice_kernel_equals_its_python_function():
    # the compiled kernel and the same code run by the interpreter (.py_func), from the same stream
    from dplit.priors import PRIOR_GAMMA
    s = np.array([-1.5, -1.2, -0.8])
    chol = np.linalg.cholesky(np.array([[0.04, 0.03, 0.03], [0.03, 0.05, 0.04], [0.03, 0.04, 0.06]]))
    th0 = np.log([2.0, 3.0, 4.0])
    args = (30, 3.0, chol, np.linalg.inv(chol), s, 100.0, PRIOR_GAMMA, np.ones(3), np.full(3, 0.1), np.zeros((3, 3)))
    th_k, th_r = th0.copy(), th0.copy()
    ev_k = moves.slice_kernel(th_k, *args, np.random.default_rng(3))
    ev_r = py_func(moves.slice_kernel)(th_r, *args, np.random.default_rng(3))
    assert ev_k == ev_r and ev_k > 30 and np.allclose(th_k, th_r, rtol=1e-10)


# ---------------------------------------------------------------- stationary laws
def _one_record_ks(power, mode, forget, n_steps=20_000):
    """KS statistic of one latent record's x_1 (d = 2) against its target CDF by quadrature."""
    alpha, s_L, a, scale = np.array([2.0, 3.0]), np.array([-1.6, -0.4]), 0.05, 1.5
    rng = np.random.default_rng(11)
    logx = np.log(dirichlet_draws(alpha, 1, rng=rng))
    xs = np.empty(n_steps)
    for t in range(n_steps):
        ap, coef = MV.sweep_arguments(alpha, power, mode)
        moves.record_sweep_kernel(logx, ap, np.zeros(2) if forget else coef, s_L, np.log(a), 1 / scale, rng)
        xs[t] = np.exp(logx[0, 0])
    xs = np.sort(xs[::10])

    def dens(x):
        lx = np.log(np.maximum([x, 1 - x], a))
        return stats.beta.pdf(x, *alpha) ** power * np.exp(-np.abs(s_L - lx).sum() / scale)

    grid = np.quantile(xs, np.linspace(0.05, 0.95, 10))
    total = integrate.quad(dens, 0, 1, limit=200, points=[a, 1 - a])[0]
    cdf = np.array([integrate.quad(dens, 0, g, limit=200)[0] for g in grid]) / total
    emp = np.searchsorted(xs, grid, side="right") / xs.size
    return np.max(np.abs(emp - cdf)) * np.sqrt(xs.size)


@pytest.mark.parametrize("power,mode", [(1.0, M._UPDATE_JU), (4.0, M._UPDATE_MODEL5),
                                        (4.0, MV.UPDATE_MODEL5_POWERED)])
def test_record_sweep_has_the_right_stationary_law(power, mode):
    assert _one_record_ks(power, mode, forget=False) < 2.0


def test_record_sweep_without_the_power_correction_is_detected():
    assert _one_record_ks(4.0, M._UPDATE_MODEL5, forget=True) > 3.0


def test_mcmc_matches_quadrature_posterior_d2():
    rng = np.random.default_rng(2)
    s = sufficient_stat(dirichlet_draws(np.array([3.3, 4.4]), 40, rng=rng))
    t = np.linspace(-3, 4, 400)
    T1, T2 = np.meshgrid(t, t, indexing="ij")
    A1, A2 = np.exp(T1), np.exp(T2)
    logp = (40 * (special.gammaln(A1 + A2) - special.gammaln(A1) - special.gammaln(A2))
            + 40 * ((A1 - 1) * s[0] + (A2 - 1) * s[1]) - 0.1 * (A1 + A2) + T1 + T2)
    w = np.exp(logp - logp.max())
    w /= w.sum()
    exact = np.array([(w * A1).sum(), (w * A2).sum()])
    res = M.mcmc(s, 40, n_iter=5_000, n_warmup=500, n_chains=2, rng=4, progress=False)
    mean, se = _mean_and_se(res)
    assert np.all(np.abs(mean - exact) < 4 * se)


# Exactness of DPMCMC by simulation-based calibration: tests/test_sbc_power.py, case "dp_mcmc" (600 replicates of
# the public dp_mcmc, sized by the power measured in benchmarks/results/power_sbc.json to catch a Laplace scale
# 0.7 x the true one).


# ---------------------------------------------------------------- limits and identities
def test_huge_epsilon_dp_mcmc_matches_mcmc_p1():
    rel, X = _release(n=200, eps=1e10, seed=5)
    dp = M.dp_mcmc(rel, rng=1, **dict(FAST, n_iter=3_000))
    ex = M.mcmc(sufficient_stat(X), 200, rng=1, **dict(FAST, n_iter=3_000))
    (m1, se1), (m2, se2) = _mean_and_se(dp), _mean_and_se(ex)
    assert np.all(np.abs(m1 - m2) < 4 * np.hypot(se1, se2) + 1e-3)
    sd1 = dp.posterior["alpha"].values.reshape(-1, 3).std(0)
    sd2 = ex.posterior["alpha"].values.reshape(-1, 3).std(0)
    assert np.allclose(sd1, sd2, rtol=0.15)


def test_dp_remcmc_with_b_equal_n2_is_dp_mcmc():
    rel, _ = _release(n=150, seed=6)
    a = M.dp_mcmc(rel, rng=9, **FAST)
    b = M.dp_remcmc(rel, b=rel.n2, rng=9, **FAST)
    assert np.array_equal(a.posterior["alpha"].values, b.posterior["alpha"].values)
    assert b.posterior.attrs["method"] == "DPreMCMC" and b.posterior.attrs["b"] == rel.n2


def test_dp_remcmc_approximates_dp_mcmc_when_the_noise_is_small():
    rel, _ = _release(n=1000, eps=5.0, seed=7)          # Laplace scale 0.004
    kw = dict(FAST, n_iter=3_000, thin=3)
    full = M.dp_mcmc(rel, rng=1, **kw).posterior["alpha"].values.reshape(-1, 3)
    rep = M.dp_remcmc(rel, b=50, rng=2, **kw).posterior["alpha"].values.reshape(-1, 3)
    assert np.all(np.abs(np.median(rep, 0) - np.median(full, 0)) < 0.5 * full.std(0))
    assert np.allclose(rep.std(0), full.std(0), rtol=0.3)


def test_exact_sampling_of_joint_model5_drifts_to_large_alpha():
    rel, _ = _release(n=400, eps=1.0, seed=7)
    kw = dict(FAST, n_iter=3_000, thin=3)
    full = M.dp_mcmc(rel, rng=1, **kw).posterior["alpha"].values.reshape(-1, 3)
    m5 = M.dp_remcmc(rel, b=40, record_update="model5", rng=3, **kw).posterior["alpha"].values.reshape(-1, 3)
    assert np.median(m5.sum(1)) > 3 * np.median(full.sum(1))


def test_split_release_p1_uses_both_parts_and_p5_is_the_same_target():
    rel, _ = _release(n=200, n1=50, seed=8)
    r1 = M.dp_mcmc(rel, prior="p1", rng=3, **FAST)
    r5 = M.dp_mcmc(rel, prior="p5", rng=3, **FAST)
    assert r1.posterior.attrs["parts"] == "D1+D2" and r1.posterior.attrs["latent_records"] == 200
    assert np.array_equal(r1.posterior["alpha"].values, r5.posterior["alpha"].values)
    assert r5.posterior.attrs["prior"] == "p5"
    only_d2 = M.dp_mcmc(rel, prior=GammaPrior(1.0, 0.1, d=3, name='vague'), rng=3, **FAST)
    assert only_d2.posterior.attrs["parts"] == "D2" and only_d2.posterior.attrs["latent_records"] == 150


def test_chains_start_inside_the_range_when_s_L_is_outside():
    # s_L outside Range(S0) has no posterior mode; chains once started at the clip alpha = e^8 and stayed
    # trapped there (median alpha_0 ~ 9000 with p4; the posterior's is ~ 20)
    from dplit.dirichlet import in_stat_range
    from dplit.priors import make_prior
    from dplit.release import release

    g = np.random.default_rng(5)
    X = dirichlet_draws(np.array([2.2, 3.3, 4.4]), 400, rng=g)
    rel = release(X, eps1=0.75, eps2=0.25, candidates=[1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1], tc=0.01, n1=100, rng=g, secure=False)
    assert not in_stat_range(rel.s_L)
    spec = RM.spec_from_blocks(RM.release_blocks(rel, False), rel.a, make_prior("p1", d=3).kernel_form(), 20)
    start = RM.start_statistic(spec, np.random.default_rng(1))
    assert in_stat_range(start) and np.all(RM.mode_theta(spec, start) < 7.0)
    p4 = make_prior("p4", rel, rng=2, n_draws=1000)
    for seed in (11, 13):
        res = M.dp_mcmc(rel, prior=p4, rng=seed, n_iter=2000, n_warmup=500, n_chains=2, thin=2, progress=False)
        assert np.all(np.median(res.posterior["alpha"].values.sum(-1), axis=1) < 200)


def test_chain_starts_avoid_the_corner_of_the_range():
    # one truncated-noise draw sometimes sits by the boundary of Range(S0), where the mode's alpha_0 is
    # huge (up to ~9600 here against a truth of 27.5); the mean of four draws does not
    from dplit.priors import make_prior
    from dplit.release import release

    g = np.random.default_rng(9)
    X = dirichlet_draws(np.array([2.2, 3.3, 4.4, 5.5, 6.6]), 1000, rng=g)
    rel = release(X, eps1=0.1875, eps2=0.0625, candidates=[1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1], tc=0.01, n1=250, rng=g, secure=False)
    spec = RM.spec_from_blocks(RM.release_blocks(rel, False), rel.a, make_prior("p1", d=5).kernel_form(), 20)

    def start_alpha0(k):
        return np.array([np.exp(RM.mode_theta(spec, RM.start_statistic(spec, np.random.default_rng(s), k))).sum()
                         for s in range(100)])

    one, four = start_alpha0(1), start_alpha0(4)
    assert one.max() > 1000 and four.max() < 200
    assert np.quantile(four, 0.9) / np.quantile(four, 0.1) > 1.3       # starts stay dispersed


# ---------------------------------------------------------------- results
def test_result_structure_and_determinism():
    rel, _ = _release(n=120, seed=9)
    res = M.dp_mcmc(rel, rng=4, **FAST)
    post = res.posterior
    assert post["alpha"].dims == ("chain", "draw", "component")
    assert post["alpha"].shape == (2, 500, 3)
    assert np.allclose(post["mean_composition"].values.sum(-1), 1.0)
    acc = res.sample_stats["record_acceptance"].values
    assert acc.shape == (2, 500) and np.all((acc > 0) & (acc <= 1))
    assert np.all(res.sample_stats["slice_evaluations"].values >= M.dp_mcmc.__kwdefaults__["n_slice"] + 1)
    for key in ("method", "prior", "eps1", "eps_total", "eps_by_part", "a", "n", "seeds", "runtime", "n_slice"):
        assert key in post.attrs
    assert post.attrs["method"] == "DPMCMC" and len(post.attrs["seeds"].split("; ")) == 2
    again = M.dp_mcmc(rel, rng=4, n_jobs=1, **FAST)
    assert np.array_equal(again.posterior["alpha"].values, post["alpha"].values)
    other = M.dp_mcmc(rel, rng=5, **FAST)
    assert not np.array_equal(other.posterior["alpha"].values, post["alpha"].values)


def test_release_names_label_the_components_and_survive_netcdf(tmp_path):
    from dplit import results
    from dplit.release import Release

    rel, _ = _release(n=120, seed=9)
    named = Release.from_statistic(rel.s_L, rel.n, rel.a, rel.eps1, names=["sleep", "work", "leisure"])
    split, _ = _release(n=120, n1=40, seed=9)
    named_split = Release.from_statistic(split.s_L, split.n, split.a, split.eps1, s_L1=split.s_L1, n1=split.n1,
                                         names=["sleep", "work", "leisure"])
    for res in (M.dp_mcmc(named, rng=4, **FAST), M.dp_remcmc(named, b=20, rng=4, **FAST),
                M.dp_mcmc(named_split, prior="p5", rng=4, **FAST)):
        for group in ("posterior", "observed_data"):
            assert list(res[group]["component"].values) == ["sleep", "work", "leisure"], group
        path = tmp_path / f"{res.posterior.attrs['method']}.nc"
        res.to_netcdf(str(path))
        back = results.from_netcdf(path)
        assert list(back.posterior["component"].values) == ["sleep", "work", "leisure"]
        np.testing.assert_array_equal(back.posterior["alpha"].sel(component="work").values,
                                      res.posterior["alpha"].values[..., 1])
    plain = M.dp_mcmc(rel, rng=4, **FAST)          # no names: integer coordinates as before
    assert list(plain.posterior["component"].values) == [0, 1, 2]
    again = M.dp_mcmc(named, rng=4, **FAST)
    np.testing.assert_array_equal(again.posterior["alpha"].values, plain.posterior["alpha"].values)


def test_mpsrf():
    rng = np.random.default_rng(0)
    same = rng.normal(size=(4, 1000, 3))
    assert 1.0 <= mpsrf(same) < 1.02
    assert mpsrf(same + np.array([0, 0, 0, 1.0])[:, None, None]) > 1.1
    with pytest.raises(ValueError, match="2 chains"):
        mpsrf(same[:1])


# ---------------------------------------------------------------- bad input
def test_bad_input_raises_clear_errors():
    rel, _ = _release(n=100, seed=10)
    with pytest.raises(ValueError, match="prior must be one of"):
        M.dp_mcmc(rel, prior="p9", **FAST)
    with pytest.raises(ValueError, match="no density"):
        M.dp_mcmc(rel, prior="p2", **FAST)
    with pytest.raises(ValueError, match="split release"):
        M.dp_mcmc(rel, prior="p3", **FAST)
    with pytest.raises(ValueError, match="split release"):
        M.dp_mcmc(rel, prior="p5", **FAST)
    with pytest.raises(ValueError, match="n_iter"):
        M.dp_mcmc(rel, **dict(FAST, n_iter=0))
    with pytest.raises(ValueError, match="n_chains"):
        M.dp_mcmc(rel, **dict(FAST, n_chains=0))
    with pytest.raises(ValueError, match="thin"):
        M.dp_mcmc(rel, **dict(FAST, thin=5_000))
    with pytest.raises(TypeError, match="n_iter"):
        M.dp_mcmc(rel, **dict(FAST, n_iter=10.5))
    with pytest.raises(TypeError, match="progress"):
        M.dp_mcmc(rel, **dict(FAST, progress="yes"))
    with pytest.raises(ValueError, match="n_jobs"):
        M.dp_mcmc(rel, n_jobs=0, **FAST)
    with pytest.raises(TypeError, match="Release"):
        M.dp_mcmc({"s_L": rel.s_L, "n": 100}, **FAST)
    with pytest.raises(ValueError, match="b must be"):
        M.dp_remcmc(rel, b=0, **FAST)
    with pytest.raises(ValueError, match="record_update"):
        M.dp_remcmc(rel, record_update="gaussian", **FAST)
    with pytest.raises(ValueError, match="statistic"):
        M.mcmc([0.1], 10, **FAST)
    with pytest.raises(ValueError, match="statistic must lie in Range"):
        M.mcmc(np.log([0.6, 0.6]), 10, **FAST)
    with pytest.raises(ValueError, match="mcmc takes prior"):
        M.mcmc([-1.0, -1.0], 10, prior="p3", **FAST)
    with pytest.raises(TypeError, match="prior must be"):
        M.mcmc([-1.0, -1.0], 10, prior=3.0, **FAST)
    with pytest.raises(ValueError, match="prior has d = 2 components, the release has d = 3"):
        M.dp_mcmc(rel, prior=GammaPrior(1.0, 0.1, d=2), **FAST)
    with pytest.raises(ValueError, match="prior has d = 3 components"):
        M.mcmc([-1.0, -1.0], 10, prior=GammaPrior(1.0, 0.1, d=3), **FAST)


def test_auto_runs_until_alpha_and_mean_composition_converge():
    rel, _ = _release(n=300, seed=12)
    res = M.dp_mcmc(rel, n_iter="auto", target_ess=300, n_warmup=500, n_chains=2, thin=5, rng=1, progress=False)
    attrs = res.posterior.attrs
    assert attrs["converged"] == 1 and attrs["n_iter_requested"] == "auto"
    assert attrs["ess_bulk_min"] >= 300 and attrs["ess_tail_min"] >= 300 and attrs["rhat_max"] <= 1.01
    import arviz as az
    ess = az.ess(res, var_names=["mean_composition"], method="bulk")["mean_composition"].values
    assert ess.min() >= 300                           # E[x] is monitored too
    with pytest.raises(TypeError, match="max_tries"):
        M.dp_mcmc(rel, n_iter="auto", max_tries=3, **{k: v for k, v in FAST.items() if k != "n_iter"})
    with pytest.raises(ValueError, match="n_iter"):
        M.dp_mcmc(rel, n_iter="forever", **{k: v for k, v in FAST.items() if k != "n_iter"})


def test_thin_defaults_to_one_when_the_run_follows_the_ess():
    rel, _ = _release(n=200, seed=13)
    auto = M.dp_mcmc(rel, n_iter="auto", target_ess=100, n_warmup=200, n_chains=2, rng=2, progress=False)
    fixed = M.dp_mcmc(rel, n_iter=200, n_warmup=100, n_chains=2, rng=2, progress=False)
    assert auto.posterior.attrs["thin"] == 1 and fixed.posterior.attrs["thin"] == 10
    assert fixed.posterior.sizes["draw"] == 20
    again = M.dp_mcmc(rel, n_iter=200, n_warmup=100, n_chains=2, rng=2, progress=False, thin=10)
    assert np.array_equal(fixed.posterior["alpha"].values, again.posterior["alpha"].values)
