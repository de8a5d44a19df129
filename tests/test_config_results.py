"""The size switch and the ArviZ adapter."""

import numpy as np
import pytest

from dplit import _arviz, config, diagnostics, results


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
    idata = _arviz.to_arviz(
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
        _arviz.to_arviz({"alpha": np.zeros((2, 10, 3)), "beta": np.zeros((3, 10))})
    with pytest.raises(TypeError, match="posterior"):
        _arviz.to_arviz({})


def test_the_result_is_the_installed_generations_own_object():
    res = _arviz.to_arviz({"x": np.zeros((2, 5))}, observed_data={"s": np.ones(3)})
    if _arviz.arviz_generation() == 0:
        import arviz as az
        assert isinstance(res, az.InferenceData)
    else:
        import xarray as xr
        assert isinstance(res, xr.DataTree)
    assert _arviz.groups(res) == ["posterior", "observed_data"]


def test_groups_are_read_replaced_and_added_the_same_way_under_either_generation():
    res = _arviz.to_arviz({"a": np.zeros((2, 5, 3)), "b": np.ones((2, 5))}, dims={"a": ["component"]},
                           sample_stats={"acc": np.ones((2, 5))}, attrs={"method": "m"})
    assert _arviz.groups(res) == ["posterior", "sample_stats"]
    assert set(results.posterior(res).data_vars) == {"a", "b"}
    assert list(results.posterior(res, ["b"]).data_vars) == ["b"]
    _arviz.update_attrs(res, converged=1)
    assert all(res[g].attrs["converged"] == 1 and res[g].attrs["method"] == "m" for g in _arviz.groups(res))
    _arviz.name_components(res, ["u", "v", "w"])
    assert list(res.posterior["a"].coords["component"].values) == ["u", "v", "w"]
    _arviz.move_to_group(res, ["b"], "latent")
    assert _arviz.groups(res) == ["posterior", "sample_stats", "latent"]
    assert list(_arviz.group(res, "latent").data_vars) == ["b"] and res.latent.attrs["method"] == "m"
    with pytest.raises(KeyError, match="no group"):
        _arviz.group(res, "prior")


def test_rhat_and_ess_read_arrays_datasets_and_results():
    rng = np.random.default_rng(3)
    iid = rng.normal(size=(4, 1000))
    assert abs(diagnostics.rhat(iid) - 1) < 0.01 and 3000 < diagnostics.ess(iid) < 5000
    assert 2500 < diagnostics.ess(iid, method="tail") < 5500
    ar = np.zeros((4, 1000))                              # AR(1) with phi = 0.9: ESS about n (1 - phi) / (1 + phi)
    for t in range(1, 1000):
        ar[:, t] = 0.9 * ar[:, t - 1] + rng.normal(size=4)
    assert 100 < diagnostics.ess(ar) < 500
    shifted = iid + np.arange(4)[:, None]                 # chains that disagree
    assert diagnostics.rhat(shifted) > 1.5
    both = rng.normal(size=(2, 500, 3))
    assert diagnostics.rhat(both).shape == (3,)
    res = _arviz.to_arviz({"alpha": both}, dims={"alpha": ["component"]})
    np.testing.assert_allclose(diagnostics.ess(res)["alpha"].values, diagnostics.ess(both))
    np.testing.assert_allclose(diagnostics.rhat(res, var_names=["alpha"])["alpha"].values, diagnostics.rhat(both))
    assert diagnostics.rhat(rng.normal(size=(1, 1000))) < 1.02         # one chain: judged by its two halves
    assert diagnostics.rhat(np.arange(1000.0)[None]) > 1.5              # ... which catches a trend
    assert np.isnan(diagnostics.rhat(rng.normal(size=(1, 3))))          # too few draws: undefined, said with a NaN
    with pytest.raises(ValueError, match="method"):
        diagnostics.ess(iid, method="mean")
    with pytest.raises(ValueError, match="chain, draw"):
        diagnostics.rhat(np.zeros(10))
