"""Bad inputs found by the round of benchmarks/bad_inputs.py (issue 46): each is refused before any work, with a
ValueError/TypeError (or a FileNotFoundError) naming the argument, or warned about."""

import json

import numpy as np
import pytest
from _helpers import noisy_release

from dplit import accounting, priors, results, study, study_store
from dplit.bootstrap import dp_boots


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    rel, _ = noisy_release(n=200, seed=1)
    res = dp_boots(rel, n_boot=40, rng=1, progress=False)
    path = tmp_path_factory.mktemp("res") / "res.nc"
    results.to_netcdf(res, path)
    return res, path


# --- results: netCDF files and draws -------------------------------------------------------------------------

def test_to_netcdf_overwrite_must_be_a_bool(result, tmp_path):
    res, _ = result
    with pytest.raises(TypeError, match="overwrite"):
        results.to_netcdf(res, tmp_path / "o.nc", overwrite="no")
    assert not (tmp_path / "o.nc").exists()


def test_to_netcdf_path_must_be_a_path(result):
    with pytest.raises(TypeError, match="path"):
        results.to_netcdf(result[0], ["o.nc"])


def test_from_netcdf_names_the_path(result, tmp_path):
    with pytest.raises(FileNotFoundError, match="gone.nc"):
        results.from_netcdf(tmp_path / "gone.nc")
    (tmp_path / "r.json").write_text('{"format": "dplit.release/1"}')
    with pytest.raises(ValueError, match="r.json.*not a readable netCDF"):
        results.from_netcdf(tmp_path / "r.json")
    data = result[1].read_bytes()
    (tmp_path / "cut.nc").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.nc"):
        results.from_netcdf(tmp_path / "cut.nc")


def test_draws_and_posterior_name_the_variable(result):
    res, _ = result
    with pytest.raises(ValueError, match=r"var must name variables .*alpha"):
        results.draws(res, "beta")
    with pytest.raises(ValueError, match="var_names"):
        results.posterior(res, var_names=["alfa"])
    assert results.posterior(res, var_names="alpha")["alpha"].shape == res.posterior["alpha"].shape


# --- accounting ------------------------------------------------------------------------------------------

def test_best_rdp_to_dp_refuses_curves_of_other_lengths():
    with pytest.raises(ValueError, match="eps and lams"):
        accounting.best_rdp_to_dp([0.1, 0.2], [2.0, 3.0, 4.0], 1e-6)
    with pytest.raises(ValueError, match="eps and lams"):
        accounting.best_rdp_to_dp([], [], 1e-6)
    eh, lam = accounting.best_rdp_to_dp(0.1, [2.0, 3.0, 4.0], 1e-6)      # a scalar eps still broadcasts
    assert lam in (2.0, 3.0, 4.0) and eh > 0


# --- bootstrap -------------------------------------------------------------------------------------------

def test_dp_boots_bounds_n_boot_and_names_truncation():
    rel, _ = noisy_release(n=200, seed=2)
    with pytest.raises(ValueError, match="n_boot"):
        dp_boots(rel, n_boot=10**12, progress=False)
    with pytest.raises(ValueError, match="truncation"):
        dp_boots(rel, n_boot=40, truncation="rejekt", progress=False)
    with pytest.warns(UserWarning, match="n_boot = 1"):
        dp_boots(rel, n_boot=1, rng=1, progress=False)


def test_p2_draws_bounds_n_draws_by_its_name():
    rel, _ = noisy_release(n=200, n1=50, seed=3)
    with pytest.raises(ValueError, match="n_draws"):
        priors.p2_draws(rel, n_draws=10**13)


# --- study and its stores --------------------------------------------------------------------------------

def test_mse_and_coverage_check_their_shapes():
    with pytest.raises(ValueError, match="truth"):
        study.mse(np.ones((10, 3)), np.ones(2))
    with pytest.raises(ValueError, match="n_pred"):
        study.predictive_coverage(np.ones((10, 3)), [1.0, 1.0, 1.0], n_pred=0)
    with pytest.raises(ValueError, match="alpha_draws"):
        study.predictive_coverage(np.ones((10, 2)), [1.0, 1.0, 1.0], n_pred=50, n_true=50)
    with pytest.raises(ValueError, match="level"):
        study.predictive_coverage(np.ones((10, 3)), [1.0, 1.0, 1.0], level=95)
    assert study.mse(np.ones((4, 3)), np.ones(3)) == 0.0


def test_store_arguments(tmp_path):
    with pytest.raises(TypeError, match="store"):
        study_store.open_store(7)
    table = tmp_path / "s.jsonl"
    table.write_text("")
    with pytest.raises(ValueError, match="out must be another file"):
        study_store.export_table(table, table)
    with pytest.raises(ValueError, match="keys must be JSON"):
        study_store.run_tasks(["a"], lambda k: {}, tmp_path / "t.jsonl", executor=study_store.SerialExecutor(),
                              progress=False)
    key = json.dumps({"method": "square", "x": 2})
    ran = study_store.run_tasks([key], lambda k: {"y": 4}, tmp_path / "t.jsonl", executor=study_store.SerialExecutor(),
                                progress=False)
    assert ran.ran == 1


def test_dask_executor_names_a_bad_scheduler():
    pytest.importorskip("distributed")
    with pytest.raises(TypeError, match="scheduler"):
        study_store.dask_executor(scheduler=12)


def test_study_config_files_name_the_file_and_setting(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("[study\nn = [100\n")
    with pytest.raises(ValueError, match="c.toml is not a TOML file"):
        study.StudyConfig.from_toml(bad)
    with pytest.raises(TypeError, match="alpha_true must be a list of lists"):
        study.StudyConfig.from_dict({"alpha_true": [["a", 1.0]]})
    with pytest.raises(TypeError, match="eps must be a list"):
        study.StudyConfig.from_dict({"eps": 1.0})


def test_a_folder_that_takes_no_file_is_named(result):
    # /proc takes no new file, even for the superuser (who ignores permission bits)
    with pytest.raises(OSError, match=r"cannot write /proc/o.nc: .*nothing was written"):
        results.to_netcdf(result[0], "/proc/o.nc")


def test_open_store_refuses_a_folder_or_a_file_that_is_no_store(tmp_path):
    (tmp_path / "s.jsonl").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        study_store.open_store(tmp_path / "s.jsonl")
    (tmp_path / "s.db").write_text("not sqlite\n" * 10)
    with pytest.raises(ValueError, match="s.db is not a study store"):
        study_store.open_store(tmp_path / "s.db")
    assert len(study_store.open_store(tmp_path / "new.db")) == 0
