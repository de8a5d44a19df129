"""The size switch and the ArviZ adapter."""

import numpy as np
import pytest

from dplit import config, results


@pytest.mark.parametrize("value, quick", [("1", True), ("true", True), ("0", False), ("", False)])
def test_size_switch(monkeypatch, value, quick):
    monkeypatch.setenv(config.ENV_VAR, value)
    assert config.is_quick() is quick
    assert config.size(full=1000, quick=10) == (10 if quick else 1000)


def test_size_switch_rejects_unclear_values(monkeypatch):
    monkeypatch.setenv(config.ENV_VAR, "maybe")
    with pytest.raises(ValueError, match="DPLIT_QUICK"):
        config.is_quick()


def test_to_arviz_round_trip():
    rng = np.random.default_rng(0)
    alpha = rng.gamma(2.0, size=(2, 50, 3))
    idata = results.to_arviz(
        {"alpha": alpha},
        dims={"alpha": ["component"]},
        coords={"component": ["a", "b", "c"]},
        sample_stats={"accept_rate": rng.uniform(size=(2, 50))},
        attrs={"method": "test", "epsilon": 1.0, "seed": None},
    )
    assert idata.posterior["alpha"].dims == ("chain", "draw", "component")
    np.testing.assert_array_equal(results.draws(idata, "alpha"), alpha.reshape(100, 3))
    assert results.attrs_of(idata)["method"] == "test"
    import arviz as az

    summary = az.summary(idata, var_names=["alpha"])
    assert summary.shape[0] == 3 and "r_hat" in summary


def test_to_arviz_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="chain, draw"):
        results.to_arviz({"alpha": np.zeros((2, 10, 3)), "beta": np.zeros((3, 10))})
    with pytest.raises(TypeError, match="posterior"):
        results.to_arviz({})
