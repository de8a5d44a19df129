"""Helpers shared by the test files (imported as `_helpers`: pytest puts tests/ on sys.path)."""

import numpy as np

from dplit.dirichlet import censored_stat, dirichlet_draws
from dplit.release import Release


def noisy_release(n=200, eps=1.0, a=1e-3, alpha=(2.2, 3.3, 4.4), n1=0, seed=0):
    """(Release, X): Dirichlet records released at a fixed threshold a with Laplace noise (split when n1 > 0)."""
    rng = np.random.default_rng(seed)
    X = dirichlet_draws(np.array(alpha), n, rng=rng)
    d = len(alpha)
    if n1 == 0:
        s_L = censored_stat(X, a) + rng.laplace(0, -d * np.log(a) / (n * eps), d)
        return Release.from_statistic(s_L, n, a, eps), X
    s_L1 = censored_stat(X[:n1], a) + rng.laplace(0, -d * np.log(a) / (n1 * eps), d)
    s_L2 = censored_stat(X[n1:], a) + rng.laplace(0, -d * np.log(a) / ((n - n1) * eps), d)
    return Release.from_statistic(s_L2, n, a, eps, s_L1=s_L1, n1=n1), X
