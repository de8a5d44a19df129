"""dplit.testing.audit_mechanism: it keeps to its claim for a correct mechanism and flags one with too little noise.

The size and the controls are the ones benchmarks/power_mechanisms.py validated over many seeds
(benchmarks/results/power_mechanisms.json); here each runs once, with a fixed seed.
"""

import numpy as np
import pytest

from dplit.mechanisms import AuditResult, laplace_mechanism
from dplit.testing import audit_mechanism

AUDIT_N = 20_000   # releases per neighbour
AUDIT_EPS = 1.0    # the epsilon the mechanism claims
# audit_mechanism's default confidence is 0.95: a correct mechanism's bound exceeds its epsilon with
# probability <= 0.05 (the false-alarm level; the audit is conservative, the measured rate is far lower)


def audit_laplace(seed, noise_factor=1.0, n=AUDIT_N, eps=AUDIT_EPS):
    """audit_mechanism of a Laplace mechanism claiming ``eps`` on the neighbours 0 and 1 (sensitivity 1).

    Its noise scale is ``noise_factor / eps``: 1 is the correct mechanism, 0.5 the half-noise bug (it spends
    2 eps), 0.7 a noise scale 30% too small (it spends eps / 0.7 = 1.43 eps).
    """
    def mechanism(x, rng):
        return laplace_mechanism(x, 1.0, eps / noise_factor, rng=rng, secure=False)

    return audit_mechanism(mechanism, 0.0, 1.0, n, rng=seed)


def test_audit_stays_below_epsilon_for_a_correct_laplace_mechanism():
    res = audit_laplace(seed=1)
    assert isinstance(res, AuditResult) and res.n_a == res.n_b == AUDIT_N and res.confidence == 0.95
    assert res.eps_lower <= AUDIT_EPS
    assert res.eps_lower > 0.7 * AUDIT_EPS    # and it sees most of the budget: not vacuous


@pytest.mark.parametrize("noise_factor", [0.5, 0.7])
def test_audit_flags_a_laplace_mechanism_with_too_little_noise(noise_factor):
    """Planted controls: half the noise (the brief's) and a scale 30% too small (moderate); power >= 0.9."""
    assert audit_laplace(seed=2, noise_factor=noise_factor).eps_lower > AUDIT_EPS


def test_audit_projects_vector_outputs_and_is_reproducible():
    def mechanism(x, rng):                   # the signal sits in the second coordinate only
        return laplace_mechanism(np.array([0.0, x, 0.0]), 1.0, 2.0, rng=rng, secure=False)

    first = audit_mechanism(mechanism, 0.0, 1.0, 2000, rng=3)              # default: the first coordinate
    second = audit_mechanism(mechanism, 0.0, 1.0, 2000, project=lambda out: out[1], rng=3)
    assert first.eps_lower < 0.5 < 1.0 < second.eps_lower <= 2.0
    again = audit_mechanism(mechanism, 0.0, 1.0, 2000, project=lambda out: out[1], rng=3)
    assert again == second
    assert audit_mechanism(mechanism, 0.0, 1.0, 2000, project=lambda out: out[1], rng=4) != second
