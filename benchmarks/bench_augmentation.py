"""Benchmark of dplit.augmentation (notebook 13): Python modules vs numba modules vs dapper (R).

Run from the repository root:  .venv/bin/python benchmarks/bench_augmentation.py

Prints iterations per second and the smallest bulk ESS per second (ArviZ, one chain, ESS over the total
run time including warm-up, as dapper's figures in ../shared/benchmarks/README.md) for
1. dapper's Example 1 (randomized response, n = 400, released table 104/120/74/102): dapper's own
   modules in Python (a 400 x 2 term per record), compact modules in Python (one number per record)
   and the compact modules in numba; dapper: 287 it/s, 1.6-3.3 ESS_bulk/s (20,000 iterations);
2. dapper's Example 3 (clamped regression statistics, Laplace, n = 50, eps = 10): Python vs numba;
3. the compositional release of ../shared/benchmarks/dapper_compositional_release.csv (n = 1000,
   d = 3, a = 1e-3, eps = 1) with dapper's own post_f (5 random-walk steps on log alpha, sd 0.02)
   written as numba modules, next to dplit.mcmc.dp_mcmc (the specialised kernel) and dapper's
   41.6-48.8 it/s, 0.01-0.12 ESS_bulk/s.
Numba modules are compiled by a short warm-up call before timing. Figures move 15-25% between runs on
a shared machine; the ratios printed in the same process are the point.
"""

import csv
import math
import os
import warnings

import arviz as az
import numpy as np
from numba import njit

from dplit.augmentation import PrivacyModel, dapper_sample
from dplit.mcmc import dp_mcmc
from dplit.release import Release
from dplit.sampling import ConvergenceWarning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAPPER_CSV = os.path.join(ROOT, "..", "shared", "benchmarks", "dapper_compositional_release.csv")
warnings.simplefilter("ignore", ConvergenceWarning)


def measure(model, sdp, init, n_iter, n_warmup, seed=1, names=None):
    """(iterations/s, min ESS_bulk/s) of one chain, ESS over the total run time."""
    res = dapper_sample(model, sdp, np.asarray(init, float), n_iter=n_iter, n_warmup=n_warmup, n_chains=1,
                        rng=seed, progress=False)
    rt = res.posterior.attrs["runtime"]
    names = names or model.varnames
    ess = min(float(az.ess(res.posterior[v].values)) for v in names)
    return (n_iter + n_warmup) / rt, ess / rt


# ---- Example 1 --------------------------------------------------------------------------------------
N1 = 400
CELLS = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])
SDP1 = np.repeat(CELLS, [104, 120, 74, 102], axis=0).astype(float)


def ex1_latent(theta, rng):
    return CELLS[rng.choice(4, size=N1, p=theta / theta.sum())].astype(float)


def ex1_post(dmat, theta, rng):
    sex, status = dmat[:, 0] == 1, dmat[:, 1] == 1
    x = np.array([np.sum(sex & status), np.sum(sex & ~status), np.sum(~sex & status), np.sum(~sex & ~status)])
    t = rng.standard_gamma(x + 1.0)
    return t / t.sum()


def ex1_st(xi, sdp, i):
    x = np.zeros((N1, 2))
    x[i] = xi
    return x


def ex1_priv(sdp, sx):
    t1 = np.sum(sdp == sx)
    return t1 * math.log(0.75) + (2 * N1 - t1) * math.log(0.25)


def ex1_st_c(xi, sdp, i):
    return float(xi[0] == sdp[i, 0]) + float(xi[1] == sdp[i, 1])


def ex1_priv_c(sdp, sx):
    return sx * math.log(0.75) + (sdp.size - sx) * math.log(0.25)


@njit
def ex1_latent_nb(theta, rng):
    cdf = np.cumsum(theta / theta.sum())
    out = np.empty((N1, 2))
    for i in range(N1):
        u, k = rng.random(), 0
        while k < 3 and u >= cdf[k]:
            k += 1
        out[i, 0] = 1.0 if k < 2 else 0.0
        out[i, 1] = 1.0 if k % 2 == 0 else 0.0
    return out


@njit
def ex1_post_nb(dmat, theta, rng):
    t = np.ones(4)
    for i in range(dmat.shape[0]):
        t[2 * (1 - int(dmat[i, 0])) + (1 - int(dmat[i, 1]))] += 1.0
    for k in range(4):
        t[k] = rng.standard_gamma(t[k])
    return t / t.sum()


@njit
def ex1_st_nb(xi, sdp, i):
    return (1.0 if xi[0] == sdp[i, 0] else 0.0) + (1.0 if xi[1] == sdp[i, 1] else 0.0)


@njit
def ex1_priv_nb(sdp, sx):
    return sx * math.log(0.75) + (sdp.size - sx) * math.log(0.25)


# ---- Example 3 --------------------------------------------------------------------------------------
N3, SIG2 = 50, 2.0
MU_X = np.array([0.9, -1.17])


def ex3_latent(theta, rng):
    x = MU_X + rng.standard_normal((N3, 2))
    y = theta[0] + x @ theta[1:] + math.sqrt(SIG2) * rng.standard_normal(N3)
    return np.column_stack([y, x])


def ex3_post(dmat, theta, rng):
    X = np.column_stack([np.ones(dmat.shape[0]), dmat[:, 1:]])
    cov = np.linalg.inv(X.T @ X / SIG2 + np.eye(3) / 4.0)
    return cov @ (X.T @ dmat[:, 0]) / SIG2 + np.linalg.cholesky(cov) @ rng.standard_normal(3)


def ex3_st(xi, sdp, i):
    y, x1, x2 = np.clip(xi, -10.0, 10.0) / 10.0
    return np.array([y, x1 * y, x2 * y, y * y, x1, x1 * x1, x2, x1 * x2, x2 * x2])


def ex3_priv(sdp, sx):
    return -np.abs(sdp - sx).sum() * 10.0 / 15.0


@njit
def ex3_latent_nb(theta, rng):
    out = np.empty((N3, 3))
    for i in range(N3):
        x1 = MU_X[0] + rng.standard_normal()
        x2 = MU_X[1] + rng.standard_normal()
        out[i, 0] = theta[0] + theta[1] * x1 + theta[2] * x2 + math.sqrt(SIG2) * rng.standard_normal()
        out[i, 1] = x1
        out[i, 2] = x2
    return out


@njit
def ex3_post_nb(dmat, theta, rng):
    Xt = np.ones((3, dmat.shape[0]))
    Xt[1:] = dmat[:, 1:].T
    cov = np.linalg.inv(Xt @ Xt.T / SIG2 + np.eye(3) / 4.0)
    mean = cov @ (Xt @ np.ascontiguousarray(dmat[:, 0])) / SIG2
    z = np.empty(3)
    for k in range(3):
        z[k] = rng.standard_normal()
    return mean + np.linalg.cholesky(cov) @ z


@njit
def ex3_st_nb(xi, sdp, i):
    c = np.minimum(np.maximum(xi, -10.0), 10.0) / 10.0
    y, x1, x2 = c[0], c[1], c[2]
    return np.array([y, x1 * y, x2 * y, y * y, x1, x1 * x1, x2, x1 * x2, x2 * x2])


@njit
def ex3_priv_nb(sdp, sx):
    s = 0.0
    for k in range(sdp.size):
        s -= abs(sdp[k] - sx[k])
    return s * 10.0 / 15.0


def ex3_release(seed=1):
    rng = np.random.default_rng(seed)
    beta = np.array([-1.79, -2.89, -0.66])
    x = MU_X + rng.standard_normal((N3, 2))
    y = beta[0] + x @ beta[1:] + math.sqrt(SIG2) * rng.standard_normal(N3)
    d = np.column_stack([y, x])
    return sum(ex3_st(d[i], None, i) for i in range(N3)) + rng.laplace(0.0, 1.5, 9)


# ---- the compositional release (dapper's benchmark inputs) ------------------------------------------
ND, DD, A_D, EPS_D = 1000, 3, 1e-3, 1.0
LOG_A = math.log(A_D)
B_D = -DD * LOG_A / (ND * EPS_D)


@njit
def dir_latent(theta, rng):
    out = np.empty((ND, DD))
    for i in range(ND):
        tot = 0.0
        for j in range(DD):
            out[i, j] = max(rng.standard_gamma(theta[j]), 1e-300)
            tot += out[i, j]
        for j in range(DD):
            out[i, j] /= tot
    return out


@njit
def dir_target(lal, s0):
    tot, out = 0.0, 0.0
    for j in range(DD):
        al = math.exp(lal[j])
        tot += al
        out += -math.lgamma(al) * ND + (al - 1.0) * ND * s0[j] + lal[j] - 0.1 * al
    return out + math.lgamma(tot) * ND


@njit
def dir_post(dmat, theta, rng):             # dapper's benchmark: 5 random-walk steps, sd 0.02
    s0 = np.zeros(DD)
    for i in range(ND):
        for j in range(DD):
            s0[j] += math.log(dmat[i, j]) / ND
    lal = np.log(theta)
    cur = dir_target(lal, s0)
    prop = np.empty(DD)
    for _ in range(5):
        for j in range(DD):
            prop[j] = lal[j] + 0.02 * rng.standard_normal()
        new = dir_target(prop, s0)
        if new - cur >= 0.0 or rng.random() < math.exp(new - cur):
            lal[:] = prop
            cur = new
    return np.exp(lal)


@njit
def dir_st(xi, sdp, i):
    out = np.empty(DD)
    for j in range(DD):
        out[j] = max(math.log(xi[j]), LOG_A) / ND
    return out


@njit
def dir_priv(sdp, sx):
    s = 0.0
    for j in range(DD):
        s -= abs(sdp[j] - sx[j])
    return s / B_D


def main():
    print(__doc__.splitlines()[0])
    rows = []
    m_dapper = PrivacyModel(ex1_latent, ex1_post, ex1_priv, ex1_st, 4)
    m_compact = PrivacyModel(ex1_latent, ex1_post, ex1_priv_c, ex1_st_c, 4, same_shape=False)
    m_nb = PrivacyModel(ex1_latent_nb, ex1_post_nb, ex1_priv_nb, ex1_st_nb, 4, same_shape=False)
    measure(m_nb, SDP1, [0.25] * 4, 20, 0)                      # compile
    rows.append(("Example 1", "dapper's modules, Python", *measure(m_dapper, SDP1, [0.25] * 4, 1000, 200),
                 "287 it/s, 1.6-3.3 ESS/s"))
    rows.append(("Example 1", "compact modules, Python", *measure(m_compact, SDP1, [0.25] * 4, 3000, 500), ""))
    rows.append(("Example 1", "compact modules, numba", *measure(m_nb, SDP1, [0.25] * 4, 20_000, 2000), ""))
    sdp3 = ex3_release()
    p3 = PrivacyModel(ex3_latent, ex3_post, ex3_priv, ex3_st, 3)
    n3 = PrivacyModel(ex3_latent_nb, ex3_post_nb, ex3_priv_nb, ex3_st_nb, 3)
    measure(n3, sdp3, np.zeros(3), 20, 0)
    rows.append(("Example 3", "Python modules", *measure(p3, sdp3, np.zeros(3), 2000, 500), "(not recorded)"))
    rows.append(("Example 3", "numba modules", *measure(n3, sdp3, np.zeros(3), 100_000, 5000), ""))
    with open(DAPPER_CSV) as fh:
        sdp_d = np.array([float(r["sdp"]) for r in csv.DictReader(fh)])
    md = PrivacyModel(dir_latent, dir_post, dir_priv, dir_st, 3)
    measure(md, sdp_d, [2.0, 3.0, 4.0], 20, 0)
    rows.append(("compositional n=1000", "numba modules (dapper's post_f)",
                 *measure(md, sdp_d, [2.0, 3.0, 4.0], 20_000, 10_000), "41.6-48.8 it/s, 0.01-0.12 ESS/s"))
    rel = Release.from_statistic(sdp_d, ND, A_D, EPS_D)
    dp_mcmc(rel, n_iter=200, n_warmup=100, n_chains=1, rng=0, progress=False)
    res = dp_mcmc(rel, n_iter=20_000, n_warmup=2_000, n_chains=1, thin=10, rng=1, progress=False)
    rt = res.posterior.attrs["runtime"]
    ess = min(float(az.ess(res.posterior["alpha"].values[..., j])) for j in range(3))
    rows.append(("compositional n=1000", "dp_mcmc (specialised kernel)", 22_000 / rt, ess / rt, ""))
    print(f"{'model':<22}{'modules':<34}{'it/s':>10}{'min ESS_bulk/s':>16}   dapper (R)")
    for model, mods, its, ess_s, ref in rows:
        print(f"{model:<22}{mods:<34}{its:>10.0f}{ess_s:>16.2f}   {ref}")
    ex1 = {r[1]: r for r in rows if r[0] == "Example 1"}
    print(f"Example 1, numba modules: {ex1['compact modules, numba'][2] / 287:.0f} x dapper's iterations/s, "
          f"{ex1['compact modules, numba'][3] / 3.3:.0f}-{ex1['compact modules, numba'][3] / 1.6:.0f} x its ESS_bulk/s")
    ex3 = [r for r in rows if r[0] == "Example 3"]
    print(f"Example 3: numba modules {ex3[1][2] / ex3[0][2]:.0f} x the Python modules' iterations/s")


if __name__ == "__main__":
    main()
