"""dplit.accounting: the budget ledger, RDP and zCDP conversions, the exact discrete-Gaussian epsilon."""

import math

import numpy as np
import pytest

from dplit import accounting as A
from dplit import mechanisms as M


def test_budget_sequential_and_parallel():
    b = A.PrivacyBudget(1.0)
    assert b.spend(0.25, "eps2") == pytest.approx(0.75)
    assert b.spend_parallel([0.5, 0.7], "two halves") == pytest.approx(0.05)
    assert b.spent == pytest.approx(0.95)
    assert [e.composition for e in b.entries] == ["sequential", "parallel"]
    assert b.entries[1].eps == 0.7
    assert "remaining" in repr(b)


def test_budget_refuses_overspending_and_records_nothing():
    b = A.PrivacyBudget(0.5)
    b.spend(0.4)
    with pytest.raises(A.BudgetExceededError, match="left"):
        b.spend(0.2, "too much")
    with pytest.raises(A.BudgetExceededError):
        b.spend_parallel([0.05, 0.3])
    assert len(b.entries) == 1 and b.remaining == pytest.approx(0.1)
    assert isinstance(A.BudgetExceededError("x"), ValueError)


def test_budget_exact_split_can_be_spent_in_full():
    b = A.PrivacyBudget(0.3)
    b.spend(0.1)
    b.spend(0.2)
    assert b.remaining == 0.0
    assert not b.can_spend(1e-9)


def test_the_privacy_parameter_is_spelt_eps_everywhere():
    b = A.PrivacyBudget(1.0)
    assert b.can_spend(eps=0.5) and b.spend(eps=0.25, label="a") == pytest.approx(0.75)
    assert b.spend_parallel(eps=[0.25, 0.5], label="b") == pytest.approx(0.25) and b.entries[0].eps == 0.25
    r = A.RdpBudget()
    r.spend_rdp(eps=0.5, lam=5, label="c")
    assert r.eps == r.entries[0].eps == 0.5 and "eps=0.5" in repr(r)
    assert A.rdp_to_dp(eps=0.5, lam=5, delta=1e-5) == A.best_rdp_to_dp(eps=[0.5], lams=[5], delta=1e-5)[0]
    assert A.compose_rdp(eps=[0.1, 0.2]) == pytest.approx(0.3)
    assert A.discrete_gaussian_delta(eps=1.0, sigma=2.0) > 0
    with pytest.raises(ValueError, match=r"^eps must"):
        b.spend(-1.0)


def test_rdp_budget_absorbs_a_models_ledger_all_or_nothing():
    own = A.RdpBudget()
    own.spend_rdp(0.2, 5, "table 1")
    own.spend_rdp(0.2, 10, "table 2")
    capped = A.RdpBudget(total=1.0)
    capped.absorb(own)
    capped.absorb(None)                                  # a non-private model charges nothing
    assert capped.entries == own.entries and capped.eps == pytest.approx(0.4) and capped.lam == 5
    assert capped.remaining == pytest.approx(0.6) and capped.can_spend(0.6) and not capped.can_spend(0.7)
    more = A.RdpBudget()
    more.spend_rdp(0.5, 5, "fits")
    more.spend_rdp(0.5, 5, "does not")
    with pytest.raises(A.BudgetExceededError, match="left"):
        capped.absorb(more)
    assert len(capped.entries) == 2                      # nothing of the refused ledger was recorded
    with pytest.raises(TypeError, match="RdpBudget"):
        capped.absorb(A.PrivacyBudget(1.0))
    assert A.RdpBudget().remaining == math.inf and A.RdpBudget().can_spend(1e9)


@pytest.mark.parametrize("call", [
    lambda: A.PrivacyBudget(0.0),
    lambda: A.PrivacyBudget(math.inf),
    lambda: A.PrivacyBudget(1.0).spend(-0.1),
    lambda: A.PrivacyBudget(1.0).spend_parallel([]),
])
def test_budget_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_rdp_to_dp_solves_lemma_3():
    for lam in [1.5, 2.0, 10.0, 200.0]:
        for eps in [0.0, 0.3, 5.0]:
            delta = 1e-6
            eh = A.rdp_to_dp(eps, lam, delta)
            back = math.exp((lam - 1) * (eps - eh)) / (lam - 1) * (1 - 1 / lam) ** lam
            assert back == pytest.approx(delta, rel=1e-9)
            assert eh < A.rdp_to_dp_classic(eps, lam, delta)


def test_rdp_to_dp_is_valid_for_the_gaussian():
    """The Gaussian mechanism's exact (eps, delta) curve must lie below the converted bound."""
    from scipy.stats import norm

    sigma, delta = 2.0, 1e-5
    eps_hat, lam = A.best_rdp_to_dp(np.linspace(1.1, 200, 2000) / (2 * sigma**2),
                                    np.linspace(1.1, 200, 2000), delta)
    # analytic Gaussian delta at eps_hat (Balle and Wang 2018), sensitivity 1
    d = norm.cdf(1 / (2 * sigma) - eps_hat * sigma) - math.exp(eps_hat) * norm.cdf(-1 / (2 * sigma) - eps_hat * sigma)
    assert d <= delta
    assert eps_hat <= A.zcdp_to_dp(1 / (2 * sigma**2), delta) + 1e-9
    assert A.zcdp_to_dp(1 / (2 * sigma**2), delta, method="cks") == pytest.approx(eps_hat, abs=1e-3)


def test_compose_rdp():
    assert A.compose_rdp([0.1, 0.2]) == pytest.approx(0.3)
    np.testing.assert_allclose(A.compose_rdp(np.ones((4, 3))), 4.0)
    with pytest.raises(ValueError):
        A.compose_rdp([])


@pytest.mark.parametrize("call, word", [
    (lambda: A.rdp_to_dp(1.0, 1.0, 1e-5), "lam"),
    (lambda: A.rdp_to_dp(1.0, 2.0, 1.0), "delta"),
    (lambda: A.rdp_to_dp(-1.0, 2.0, 1e-5), r"\beps\b"),
    (lambda: A.zcdp_to_dp(0.0, 1e-5), "rho"),
    (lambda: A.zcdp_to_dp(0.1, 1e-5, method="magic"), "method"),
    (lambda: A.gaussian_zcdp_rho(0.0, 1.0), "sigma"),
    (lambda: A.discrete_gaussian_epsilon(1.0, 1e-5, shift=[0, 0]), "shift"),
])
def test_conversion_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_dapper_example_2_both_sensitivities():
    sigma, delta = 6.32, 1e-10
    std2 = A.zcdp_to_dp(A.gaussian_zcdp_rho(sigma, 2.0), delta)
    assert std2 == pytest.approx(2 * math.log(3), abs=2e-3)
    std_sqrt2 = A.zcdp_to_dp(A.gaussian_zcdp_rho(sigma, math.sqrt(2)), delta)
    assert std_sqrt2 == pytest.approx(1.54, abs=0.01)
    exact = A.discrete_gaussian_epsilon(sigma, delta, shift=[1, 1])
    assert exact == pytest.approx(1.33, abs=0.01)  # close to the analytic Gaussian bound
    assert A.discrete_gaussian_epsilon(sigma, delta, shift=[2]) < A.zcdp_to_dp(
        A.gaussian_zcdp_rho(sigma, 2.0), delta, method="cks") < std2


def test_discrete_gaussian_delta_brute_force():
    sigma, eps = 1.1, 0.6
    y = np.arange(-150, 151)
    p = np.exp(M.discrete_gaussian_logpmf(y, sigma))
    q = np.exp(M.discrete_gaussian_logpmf(y, sigma, mu=3))
    assert A.discrete_gaussian_delta(eps, sigma, shift=[3]) == pytest.approx(
        np.maximum(p - math.exp(eps) * q, 0).sum(), rel=1e-10)
    assert A.discrete_gaussian_delta(eps, sigma, shift=[-3]) == A.discrete_gaussian_delta(eps, sigma, shift=[3])
    e = A.discrete_gaussian_epsilon(sigma, 1e-6, shift=[1, 2])
    assert A.discrete_gaussian_delta(e, sigma, shift=[1, 2]) == pytest.approx(1e-6, rel=1e-6)


@pytest.mark.parametrize("rho", [1e-4, 0.05, 1.0, 50.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-5, 0.3])
def test_zcdp_cks_is_the_best_order(rho, delta):
    lams = 1 + np.logspace(-6, 8, 100_001)
    brute = np.min(A.rdp_to_dp(lams * rho, lams, delta))
    cks = A.zcdp_to_dp(rho, delta, method="cks")
    assert brute - 1e-4 <= cks <= brute + 1e-7
    assert cks <= A.zcdp_to_dp(rho, delta)


def test_numpy_scalars_and_0d_arrays_are_accepted():
    assert A.PrivacyBudget(np.float64(1.0)).spend(np.array(0.5)) == pytest.approx(0.5)
    assert A.rdp_to_dp(np.float32(0.5), np.int64(10), np.array(1e-5)) == pytest.approx(
        A.rdp_to_dp(0.5, 10, 1e-5))
    with pytest.raises(TypeError, match="total"):
        A.PrivacyBudget("1.0")
