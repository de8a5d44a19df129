"""Tests of dplit.study: settings, keys and seeds, the SQLite store, resumption, executors (incl. Dask); and of
dplit.study_summary: the summaries and figures of a store."""

import json
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dplit import study, study_store, study_summary
from dplit.study import (
    METHOD_SETTINGS,
    ResultStore,
    SerialExecutor,
    StudyConfig,
    make_tasks,
    run_study,
    run_task,
)

SMALL = {"alpha_true": [[2.0, 2.0, 2.0]], "n": [200], "eps": [1.0], "methods": ["dpboots", "dpmcmc_p1"],
         "replicates": 2, "seed": 1, "quick": True}


def _measures(path):
    return sorted(json.dumps({k: v for k, v in r.items() if k != "runtime"}, sort_keys=True)
                  for r in ResultStore(path).rows())


def test_config_from_issue_toml(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("[study]\nalpha_true = [[2.0, 2.0, 2.0]]\nn = [200]\neps = [1.0]\n"
                 "methods = [\"dpboots\", \"dpmcmc_p1\"]\nreplicates = 2\nseed = 1\nquick = true\n")
    c = StudyConfig.from_toml(p)
    assert c.scenarios() == [((2.0, 2.0, 2.0), 200, 1.0)] and c.n_iter == 2000 and c.n_boot == 200
    # the defaults are the paper's grid: 5 x 2 x 4 cells, its 17 methods (DPapprox by dplit's blocked update) and
    # the paper's own DPapprox_p4 sampler (Gibbs)
    paper = StudyConfig()
    assert len(paper.scenarios()) == 40 and len(paper.methods) == 18 and paper.n_iter == 20000
    assert METHOD_SETTINGS == {"dpapprox_gibbs_p4": {"update": "gibbs"}}


@pytest.mark.parametrize("bad, word", [({"replicate": 2}, "replicate"), ({"methods": ["x"]}, "methods"),
                                       ({"methods": ["dpmcmc_p2"]}, "methods"), ({"eps": [0.0]}, "eps"),
                                       ({"eps": [-1.0]}, "eps"), ({"alpha_true": [[1.0]]}, "alpha_true"),
                                       ({"threshold": 1.5}, "threshold"), ({"threshold": 2.0}, "threshold"),
                                       ({"n_iter": 0}, "n_iter")])
def test_config_bad_input_names_the_setting(bad, word):
    with pytest.raises((ValueError, TypeError), match=word):
        StudyConfig.from_dict(bad)


def test_keys_and_seeds_are_stable():
    ts = make_tasks(StudyConfig.from_dict(SMALL))
    assert len({t.key for t in ts}) == 4
    assert ts[0].data_seed == ts[1].data_seed != ts[2].data_seed
    # the seed is a function of the key only: fixed across runs, machines and Python's hash seed
    import hashlib

    expected = int.from_bytes(hashlib.sha256(b'{"a":1}').digest()[:8], "big") >> 1
    assert study.derive_seed({"a": 1}) == study.derive_seed('{"a":1}') == expected == 48799348328414486
    # the same task in a larger or reordered study has the same key, and so the same seeds
    big = StudyConfig.from_dict({**SMALL, "methods": ["dpmcmc_p1", "dpabc_p4", "dpboots"], "eps": [0.5, 1.0],
                                 "replicates": 3})
    assert {t.key for t in ts} <= {t.key for t in make_tasks(big)}
    assert study.derive_seed({"b": 1, "a": 2}) == study.derive_seed({"a": 2, "b": 1})
    assert all(getattr(study, name) is getattr(study_store, name) for name in study_store.__all__)


def test_replicate_at_huge_eps_and_at_a_fixed_threshold():
    from dplit.dirichlet import censored_stat

    s0 = dict(make_tasks(StudyConfig.from_dict(SMALL))[0].settings)
    big_eps = study.simulate_replicate({**s0, "eps": 1e10})       # no noise to speak of: the exact statistic
    assert np.allclose(big_eps["unsplit"].s_L, censored_stat(big_eps["X"], big_eps["unsplit"].a), atol=1e-8)
    fixed = study.simulate_replicate({**s0, "threshold": 1e-6})   # S5: no selection, the whole budget to Laplace
    assert fixed["unsplit"].a == 1e-6 and fixed["unsplit"].eps1 == 1.0 and fixed["unsplit"].eps2 == 0.0
    assert fixed["split"].a == 1e-6 and fixed["split"].eps1 == 1.0


N_COVER, N_TRUE = 4000, 20000
COVER_TOL = 3 * np.sqrt(0.95 * 0.05 * (1 / N_COVER + 1 / N_TRUE)) + 0.005


@pytest.mark.parametrize("alpha", [[3.3, 4.4], [2.2, 3.3, 4.4], [2.2, 3.3, 4.4, 5.5, 6.6], [0.5, 0.5, 0.5]])
def test_coverage_at_the_truth_is_095(alpha):
    cov = study.predictive_coverage([alpha], alpha, n_pred=N_COVER, n_true=N_TRUE, rng=5)
    assert abs(cov - 0.95) < COVER_TOL, cov


def _coverage_centred_off(alpha_draws, alpha_true, shift, rng):
    """The coverage with the ellipsoid centred ``shift`` away from the predictive mean (a planted bug)."""
    g = np.random.default_rng(rng)
    pred = g.dirichlet(alpha_draws[0], N_COVER)[:, :-1]
    zt = g.dirichlet(alpha_true, N_TRUE)[:, :-1]
    m, prec = pred.mean(0) + shift, np.linalg.inv(np.cov(pred, rowvar=False))
    q = np.quantile(np.einsum("ij,jk,ik->i", pred - pred.mean(0), prec, pred - pred.mean(0)), 0.95)
    return np.mean(np.einsum("ij,jk,ik->i", zt - m, prec, zt - m) <= q)


def test_coverage_catches_a_shifted_ellipsoid_and_an_over_dispersed_posterior():
    truth = np.array([2.2, 3.3, 4.4])
    assert abs(_coverage_centred_off([truth], truth, 0.0, rng=1) - 0.95) < COVER_TOL     # the twin is right...
    assert abs(_coverage_centred_off([truth], truth, 0.1, rng=1) - 0.95) > 5 * COVER_TOL  # ...and its bug is seen
    wide = truth * np.exp(np.random.default_rng(2).normal(0, 0.8, (2000, 1)))     # alpha_0 far too uncertain
    assert study.predictive_coverage(wide, truth, n_pred=N_COVER, rng=3) > 0.95 + COVER_TOL


def test_every_family_runs_and_agrees_on_the_mean_at_huge_eps():
    probe = StudyConfig(alpha_true=((2.2, 3.3, 4.4),), n=(500,), eps=(1e10,), replicates=1, quick=True,
                        methods=("boots", "dpboots", "mcmc_p1", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpapprox_p4"))
    out = {t.settings["method"]: run_task(t) for t in make_tasks(probe)}
    for m, o in out.items():
        assert o["error"] is None and np.isfinite(o["mse_alpha"]) and 0.5 < o["coverage"] <= 1, (m, o)
    assert max(o["se_mean"] for o in out.values()) < 1e-3        # every method recovers E[x] without noise


def test_run_twice_writes_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    assert run_study(SMALL, path, executor=SerialExecutor(), progress=False)[:2] == (4, 0)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    assert run_study(SMALL, path, executor=SerialExecutor(), progress=False)[:2] == (0, 4)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_result_does_not_depend_on_executor(tmp_path):
    run_study(SMALL, tmp_path / "a.sqlite", executor=SerialExecutor(), progress=False)
    with ThreadPoolExecutor(2) as ex:
        run_study(SMALL, tmp_path / "b.sqlite", executor=ex, progress=False)
    assert _measures(tmp_path / "a.sqlite") == _measures(tmp_path / "b.sqlite")


def test_killed_study_resumes_without_loss_or_duplicates(tmp_path):
    cfg = {**SMALL, "methods": ["dpmcmc_p1"], "replicates": 6}
    path = tmp_path / "k.sqlite"
    code = ("import json, sys; from dplit.study import run_study, SerialExecutor; "
            f"run_study(json.loads(sys.argv[1]), {str(path)!r}, executor=SerialExecutor(), progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code, json.dumps(cfg)])
    try:
        t0 = time.time()
        while len(ResultStore(path)) < 2 and time.time() - t0 < 120 and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)           # no chance to clean up
    finally:
        proc.wait()
    n_before = len(ResultStore(path))
    assert 2 <= n_before < 6
    res = run_study(cfg, path, executor=SerialExecutor(), progress=False)
    assert res.ran == 6 - n_before and res.found == n_before
    rows = ResultStore(path).rows()
    assert len(rows) == 6 and len({r["replicate"] for r in rows}) == 6
    # a stored row equals a fresh computation of its task
    t = make_tasks(StudyConfig.from_dict(cfg))[0]
    fresh = run_task(t)
    stored = next(r for r in rows if r["replicate"] == 0)
    assert all(np.isclose(stored[k], fresh[k]) for k in ("mse_alpha", "coverage", "mpsrf"))


def test_failed_method_is_recorded(tmp_path):
    t = make_tasks(StudyConfig.from_dict(SMALL))[0]
    out = run_task({**t.settings, "n_boot": -1})
    assert out["error"] and "n_boot" in out["error"]


def test_summary_and_figures(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    path = tmp_path / "s.sqlite"
    run_study(SMALL, path, executor=SerialExecutor(), progress=False)
    s = study_summary.summarise(study_summary.load_results(path))
    assert set(s["method"]) == {"dpboots", "dpmcmc_p1"} and (s["runs"] == 2).all()
    for f in (study_summary.figure_mse(s), study_summary.figure_coverage(s), study_summary.figure_convergence(s)):
        assert f.axes


def test_no_dplit_module_imports_dask_at_import_time():
    code = "import sys, dplit.study, dplit.cli; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        res = run_study(SMALL, tmp_path / "d.sqlite", executor=client.get_executor(), progress=False)
        assert res[:2] == (4, 0)
    finally:
        client.close()
        cluster.close()
    run_study(SMALL, tmp_path / "p.sqlite", workers=2, progress=False)          # the default process pool
    assert _measures(tmp_path / "d.sqlite") == _measures(tmp_path / "p.sqlite")
    run_study(SMALL, tmp_path / "s.sqlite", executor=SerialExecutor(), progress=False)
    assert _measures(tmp_path / "d.sqlite") == _measures(tmp_path / "s.sqlite")


def test_cli_study_run_and_report(tmp_path, capsys):
    from dplit.cli import main

    cfg = tmp_path / "study.toml"
    cfg.write_text("[study]\nalpha_true = [[2.0, 2.0, 2.0]]\nn = [200]\neps = [1.0]\n"
                   "methods = [\"dpboots\", \"dpmcmc_p1\"]\nreplicates = 2\nseed = 1\nquick = true\n")
    store = tmp_path / "r.sqlite"
    assert main(["study", "run", "--config", str(cfg), "--store", str(store), "--workers", "1", "--no-progress"]) == 0
    assert "ran 4 tasks" in capsys.readouterr().out
    assert main(["study", "run", "--config", str(cfg), "--store", str(store), "--no-progress"]) == 0
    assert "ran 0 tasks, found 4" in capsys.readouterr().out
    assert main(["study", "report", "--store", str(store), "--out", str(tmp_path / "fig")]) == 0
    assert (tmp_path / "fig" / "figure1_mse_alpha.png").is_file() and (tmp_path / "fig" / "summary.csv").is_file()
    assert main(["study", "report", "--store", str(tmp_path / "missing.sqlite")]) == 2
    capsys.readouterr()
    # an existing report is kept without --force (and nothing is computed), replaced with it
    before = (tmp_path / "fig" / "summary.csv").stat().st_mtime_ns
    assert main(["study", "report", "--store", str(store), "--out", str(tmp_path / "fig")]) == 2
    err = capsys.readouterr().err.strip()
    assert "already holds a report" in err and "--force" in err and len(err.splitlines()) == 1
    assert (tmp_path / "fig" / "summary.csv").stat().st_mtime_ns == before
    assert main(["study", "report", "--store", str(store), "--out", str(tmp_path / "fig"), "--force"]) == 0
    for bad in ("-1", "1", "nan", "0.5"):                       # the MPSRF is >= 1: a cut-off <= 1 counts nothing
        assert main(["study", "report", "--store", str(store), "--max-mpsrf", bad]) == 2
        assert "--max-mpsrf must be > 1" in capsys.readouterr().err


def test_cli_study_run_a_slice_first(tmp_path, capsys):
    """--methods and --replicates run a slice of the study (e.g. the cheap methods first): the same tasks, so the
    full run afterwards finds them done and runs only the rest."""
    from dplit.cli import main

    cfg = tmp_path / "study.toml"
    cfg.write_text("[study]\nalpha_true = [[2.0, 2.0, 2.0]]\nn = [200]\neps = [1.0]\n"
                   "methods = [\"boots\", \"dpboots\"]\nreplicates = 3\nseed = 1\nquick = true\n")
    store = tmp_path / "r.jsonl"
    run = ["study", "run", "--config", str(cfg), "--store", str(store), "--workers", "1", "--no-progress"]
    assert main([*run, "--methods", "dpboots", "--replicates", "2"]) == 0
    assert "ran 2 tasks" in capsys.readouterr().out
    rows = [json.loads(line)["settings"] for line in store.read_text().splitlines()]
    assert {(r["method"], r["replicate"]) for r in rows} == {("dpboots", 0), ("dpboots", 1)}
    assert main(run) == 0
    assert "ran 4 tasks, found 2 done" in capsys.readouterr().out
    for flags, message in ((["--methods", "dpmcmc_p1"], "--methods must name methods of the config"),
                           (["--methods", ","], "--methods must name"), (["--replicates", "0"], "--replicates"),
                           (["--replicates", "4"], "--replicates must be at most the config's replicates (3)")):
        assert main([*run, *flags]) == 2
        assert message in capsys.readouterr().err


def _bad_stores(tmp_path):
    import sqlite3

    (tmp_path / "text.sqlite").write_text("not a database")
    sqlite3.connect(tmp_path / "other.sqlite").execute("CREATE TABLE t (x)").connection.close()
    (tmp_path / "folder.sqlite").mkdir()
    return [(tmp_path / "folder.sqlite", "is a folder"), (tmp_path / "text.sqlite", "not a study store"),
            (tmp_path / "other.sqlite", "without a 'results' table"),
            (tmp_path / "nofolder" / "r.sqlite", "does not exist")]


def test_cli_study_store_problems_are_one_line_exit_2(tmp_path, capsys):
    from dplit.cli import main

    cfg = tmp_path / "study.toml"
    cfg.write_text("[study]\nalpha_true = [[2.0, 2.0, 2.0]]\nn = [200]\neps = [1.0]\n"
                   "methods = [\"dpboots\"]\nreplicates = 2\nseed = 1\nquick = true\n")
    for store, word in _bad_stores(tmp_path):
        for argv in (["run", "--config", str(cfg), "--workers", "1", "--no-progress"], ["report"]):
            t0 = time.perf_counter()
            assert main(["study", *argv, "--store", str(store)]) == 2, (store, argv)
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("dplit study: error:") and str(store) in err[0], err
            assert argv[0] == "report" or word in err[0], err
            assert time.perf_counter() - t0 < 5                 # refused before any task ran
    (tmp_path / "empty.sqlite").write_bytes(b"")                 # an empty file is an empty store
    assert main(["study", "report", "--store", str(tmp_path / "empty.sqlite")]) == 2
    assert "the store is empty" in capsys.readouterr().err
    assert main(["study", "run", "--config", str(cfg), "--store", str(tmp_path / "s.sqlite"), "--workers", "0"]) == 2
    assert "--workers must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite").exists()


def test_store_check_and_summarise_refuse_bad_values(tmp_path):
    for store, word in _bad_stores(tmp_path):
        with pytest.raises(ValueError, match=word):
            ResultStore(store).check(write=True)
        if word != "does not exist":
            with pytest.raises(ValueError, match=word):
                ResultStore(store).rows()
    assert ResultStore(tmp_path / "nofolder" / "r.sqlite").rows() == []   # reading an absent store: empty
    with pytest.raises(ValueError, match="does not exist"):
        run_study(SMALL, tmp_path / "nofolder" / "r.sqlite", executor=SerialExecutor(), progress=False)
    for bad in (-1.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="max_mpsrf must be > 1"):
            study_summary.summarise(None, max_mpsrf=bad)
        with pytest.raises(ValueError, match="max_mpsrf"):
            StudyConfig.from_dict(dict(SMALL, max_mpsrf=bad))
    with pytest.raises(TypeError, match="max_mpsrf"):
        study.check_max_mpsrf("1.1")
    assert study.check_max_mpsrf(float("inf")) == float("inf")


def test_python_m_dplit_study_help():
    out = subprocess.run([sys.executable, "-m", "dplit", "study", "run", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--scheduler" in out.stdout


def _rows(store):
    return sorted(json.dumps({k: v for k, v in r.items() if k != "runtime"}, sort_keys=True)
                  for r in study.open_store(store).rows())


def test_text_table_resumes_and_matches_sqlite(tmp_path):
    table, db = tmp_path / "s.jsonl", tmp_path / "s.sqlite"
    assert isinstance(study.open_store(table), study.TableStore) and isinstance(study.open_store(db), ResultStore)
    assert run_study({**SMALL, "replicates": 1}, table, executor=SerialExecutor(), progress=False)[:2] == (2, 0)
    # a larger study resumes from the text table: only the new replicate runs
    assert run_study(SMALL, table, executor=SerialExecutor(), progress=False)[:2] == (2, 2)
    before = table.read_bytes()
    assert run_study(SMALL, table, executor=SerialExecutor(), progress=False)[:2] == (0, 4)
    assert table.read_bytes() == before                       # nothing rewritten
    lines = before.decode().splitlines()
    assert len(lines) == 4 and all(set(json.loads(ln)) == {"settings", "result"} for ln in lines)
    run_study(SMALL, db, executor=SerialExecutor(), progress=False)
    assert _rows(table) == _rows(db)                           # same tasks, same measures in either store
    # export: the SQLite store into a fresh table, in key order; a second export adds nothing
    out = tmp_path / "e.jsonl"
    assert study.export_table(db, out) == 4 and study.export_table(db, out) == 0
    keys = [json.dumps(json.loads(ln)["settings"], sort_keys=True, separators=(",", ":"))
            for ln in out.read_text().splitlines()]
    assert keys == sorted(keys) and _rows(out) == _rows(db)
    with pytest.raises(ValueError, match="ending in .jsonl"):
        study.export_table(db, tmp_path / "e.csv")


def test_text_table_drops_a_line_cut_short(tmp_path):
    table = tmp_path / "s.jsonl"
    run_study(SMALL, table, executor=SerialExecutor(), progress=False)
    whole = table.read_bytes()
    table.write_bytes(whole[:-30])                             # a run killed while writing its last line
    assert len(study.TableStore(table)) == 3
    with pytest.warns(UserWarning, match="unfinished last line"):
        assert run_study(SMALL, table, executor=SerialExecutor(), progress=False)[:2] == (1, 3)
    assert len(study.TableStore(table)) == 4 and table.read_bytes().count(b"\n") == 4
    assert _rows(table) == sorted(_rows(table)) and len(set(_rows(table))) == 4
    table.write_text(table.read_text() + "not json\n")        # a damaged line in the middle is an error
    table.write_text(table.read_text() + table.read_text().splitlines()[0] + "\n")
    with pytest.raises(ValueError, match="line 5: not a task row"):
        study.TableStore(table).done_keys()


def test_until_converged_is_in_the_key():
    full = StudyConfig(alpha_true=((2.0, 2.0, 2.0),), n=(200,), eps=(1.0,), methods=("dpmcmc_p1", "dpremcmc_p1"),
                       replicates=1)
    assert full.until_converged == ("dpmcmc",) and StudyConfig(quick=True).until_converged == ()
    s = {t.settings["method"]: t.settings for t in make_tasks(full)}
    assert s["dpmcmc_p1"]["n_iter"] == "auto" and s["dpmcmc_p1"]["target_ess"] == 400
    assert s["dpremcmc_p1"]["n_iter"] == 20000 and "target_ess" not in s["dpremcmc_p1"]
    fixed = StudyConfig.from_dict({**SMALL, "quick": False, "until_converged": []})
    assert [t.settings["n_iter"] for t in make_tasks(fixed) if "n_iter" in t.settings] == [20000, 20000]
    with pytest.raises(ValueError, match="until_converged"):
        StudyConfig(until_converged=("dpabc",))
    # at eps >= 1e9 the records freeze, so the rule may have its own, lower cap; it is in the key
    grid = dict(alpha_true=((2.0, 2.0, 2.0),), n=(200,), eps=(1.0, 1e10), methods=("dpmcmc_p1", "dpremcmc_p1"),
                replicates=1)
    caps = {(t.settings["method"], t.settings["eps"]): t.settings.get("max_iter")
            for t in make_tasks(StudyConfig(**grid, max_iter_no_privacy=20000))}
    assert caps == {("dpmcmc_p1", 1.0): 200000, ("dpmcmc_p1", 1e10): 20000, ("dpremcmc_p1", 1.0): None,
                    ("dpremcmc_p1", 1e10): None}
    assert all(t.settings.get("max_iter") in (None, 200000) for t in make_tasks(StudyConfig(**grid)))  # unset
    for bad in (0, 2.5, True):
        with pytest.raises((ValueError, TypeError), match="max_iter_no_privacy"):
            StudyConfig(**grid, max_iter_no_privacy=bad)
    # replicate-major order: a study cut anywhere has every cell about equally filled
    ts = make_tasks(StudyConfig.from_dict({**SMALL, "eps": [0.5, 1.0], "replicates": 3}))
    assert [t.settings["replicate"] for t in ts[:4]] == [0, 0, 0, 0] and ts[4].settings["replicate"] == 1


def test_cli_study_export(tmp_path, capsys):
    from dplit.cli import main

    cfg = tmp_path / "study.toml"
    cfg.write_text("[study]\nalpha_true = [[2.0, 2.0, 2.0]]\nn = [200]\neps = [1.0]\n"
                   "methods = [\"dpboots\"]\nreplicates = 2\nseed = 1\nquick = true\n")
    db, table = tmp_path / "r.sqlite", tmp_path / "r.jsonl"
    assert main(["study", "run", "--config", str(cfg), "--store", str(db), "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["study", "export", "--store", str(db), "--out", str(table)]) == 0
    assert "added 2 tasks" in capsys.readouterr().out
    assert main(["study", "run", "--config", str(cfg), "--store", str(table), "--no-progress"]) == 0
    assert "ran 0 tasks, found 2" in capsys.readouterr().out
    assert main(["study", "report", "--store", str(table)]) == 0
    assert main(["study", "export", "--store", str(db), "--out", str(tmp_path / "x.csv")]) == 2


def test_summarise_intervals_cover_the_median():
    import pandas as pd

    g = np.random.default_rng(3)
    rows = []
    for cell, (n_runs, centre) in enumerate([(40, 1.0), (40, 10.0), (3, 5.0)]):
        for rep in range(n_runs):
            v = float(g.lognormal(np.log(centre), 0.5))
            rows.append({"alpha": f"a{cell}", "n": 100, "eps": 1.0, "threshold": "dp", "method": "dpboots",
                         "replicate": rep, "error": None, "runtime": 0.1, "mse_alpha": v, "mse_mean": v,
                         "se_alpha": v, "se_mean": v, "coverage": 0.95})
    s = study_summary.summarise(pd.DataFrame(rows), intervals=True, rng=1).set_index("alpha")
    for cell, centre in (("a0", 1.0), ("a1", 10.0)):     # the population median lies inside the 90% interval
        lo, mid, hi = s.loc[cell, ["mse_alpha_lo", "mse_alpha", "mse_alpha_hi"]]
        assert lo <= mid <= hi and lo < centre < hi and hi / lo < 2, (cell, lo, mid, hi)
    assert np.isnan(s.loc["a2", "mse_alpha_lo"]) and np.isfinite(s.loc["a2", "mse_alpha"])   # 3 runs: no interval
    assert s.loc["a0", "mse_alpha_hi"] < s.loc["a1", "mse_alpha_lo"]          # a tenfold difference is clear
    assert "mse_alpha_lo" not in study_summary.summarise(pd.DataFrame(rows))


def test_text_table_sees_another_writer(tmp_path):
    path = tmp_path / "t.jsonl"
    key = lambda i: json.dumps({"method": "m", "i": i}, sort_keys=True, separators=(",", ":"))  # noqa: E731
    a, b = study.TableStore(path), study.TableStore(path)
    for i in range(3):
        a.put(key(i), {"v": i})
    b.put(key(9), {"v": 1})                 # a second writer appends between a's writes
    a.put(key(9), {"v": 2})                 # a must see it (no duplicate line), though it remembers its own writes
    a.put(key(3), {"v": 3})
    assert path.read_text().count("\n") == 5 and len(a) == 5
    assert [r["v"] for r in a.rows() if r["i"] == 9] == [1]
    path.write_bytes(path.read_bytes() + b"x" * 70000)      # a last line too long to be a cut-short row
    with pytest.raises(ValueError, match="without a newline"):
        a.put(key(4), {"v": 4})
    assert path.read_bytes().count(b"\n") == 5               # nothing truncated


def test_the_committed_sec51_table_belongs_to_its_config():
    """Every row of the paper-scale table is a task of benchmarks/sec51.toml: a change of the config or of the key
    (which would orphan the table's rows and rerun them) fails here."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    table = root / "benchmarks" / "results" / "sec51_study.jsonl"
    keys = {t.key for t in make_tasks(StudyConfig.from_toml(root / "benchmarks" / "sec51.toml"))}
    stored = study.TableStore(table).done_keys()
    assert len(stored) > 4000 and stored <= keys, sorted(stored - keys)[:2]


def test_the_papers_dpapprox_sampler_runs_as_its_own_method(monkeypatch):
    """dpapprox_gibbs_p4 runs DPapprox with the paper's Gibbs update, dpapprox_p4 dplit's blocked one, on one data set."""
    import dplit.study as S

    updates, real_fit = {}, S.fit

    def spy(data, name, **kw):
        res = real_fit(data, name, **kw)
        updates[name, kw.get("update", "default")] = res.posterior.attrs["update"]
        return res

    monkeypatch.setattr(S, "fit", spy)
    config = StudyConfig(alpha_true=((2.0, 3.0, 4.0),), n=(300,), eps=(1.0,), replicates=1, quick=True,
                         methods=("dpapprox_p4", "dpapprox_gibbs_p4"))
    records = [run_task(t.key) for t in make_tasks(config)]
    assert updates == {("dpapprox", "default"): "blocked", ("dpapprox", "gibbs"): "gibbs"}
    assert all(r["error"] is None and np.isfinite(r["mse_alpha"]) for r in records)
