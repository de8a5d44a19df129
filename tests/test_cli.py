"""The command line: `dplit analyse` (the analyst's side), `python -m dplit`, --force, bad files."""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dplit import _arviz, results
from dplit.cli import analyse, main, read_compositions
from dplit.release import Release, release

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "minutes.csv"
CANDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1]


@pytest.fixture(scope="module")
def rel_file(tmp_path_factory):
    """A release made by `dplit release` from the shipped example CSV."""
    path = tmp_path_factory.mktemp("cli") / "release.json"
    assert main(["release", str(EXAMPLE), "--close", "--eps1", "0.75", "--eps2", "0.25", "--out", str(path)]) == 0
    return path


def test_example_csv_and_header_names(rel_file):
    X, names = read_compositions(EXAMPLE, close=True, with_names=True)
    assert X.shape == (600, 4) and names == ["sleep", "work", "leisure", "other"]
    assert Release.load(rel_file).names == ("sleep", "work", "leisure", "other")


@pytest.mark.parametrize("method, extra", [("dpmcmc", ["--n-iter", "200", "--n-warmup", "100"]),
                                           ("dpremcmc", ["--n-iter", "200", "--n-warmup", "100"]),
                                           ("dpboots", ["--n-boot", "50"]),
                                           ("dpabc", ["--n-accept", "50"]),
                                           ("dpapprox", ["--n-iter", "200", "--n-warmup", "100"])])
def test_analyse_reproduces_the_library(tmp_path, rel_file, capsys, method, extra):
    out = tmp_path / "post.nc"
    code = main(["analyse", str(rel_file), "--method", method, "--seed", "7", "--out", str(out), "--quiet",
                 "--test", "0.4,0.2,0.25,0.15", *extra])
    assert code == 0
    text = capsys.readouterr().out
    assert "alpha[sleep]" in text and "E[x][other]" in text and "privacy spent" in text and "reject" in text
    back = results.from_netcdf(out)
    rel = Release.load(rel_file)
    opts = {"dpboots": {"n_boot": 50}, "dpabc": {"n_accept": 50}}.get(method, {"n_iter": 200, "n_warmup": 100})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = analyse(rel, method, seed=7, progress=False, **opts)
    np.testing.assert_array_equal(back.posterior["alpha"].values, lib.posterior["alpha"].values)
    assert list(back.posterior["alpha"].coords["component"].values) == ["sleep", "work", "leisure", "other"]


def test_dpmcmc_matches_dp_mcmc_directly(tmp_path, rel_file):
    from dplit.mcmc import dp_mcmc

    out = tmp_path / "p.nc"
    assert main(["analyse", str(rel_file), "--method", "dpmcmc", "--seed", "3", "--n-iter", "100",
                 "--n-warmup", "50", "--chains", "2", "--quiet", "--out", str(out)]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = dp_mcmc(Release.load(rel_file), n_iter=100, n_warmup=50, n_chains=2, rng=3, progress=False)
    np.testing.assert_array_equal(results.from_netcdf(out).posterior["alpha"].values, lib.posterior["alpha"].values)


def _tamper(src, dst, **change):
    data = json.loads(Path(src).read_text())
    for k, v in change.items():
        if v is None:
            data.pop(k)
        else:
            data[k] = v
    Path(dst).write_text(json.dumps(data))
    return dst


@pytest.mark.parametrize("change, words", [
    ({"scale": None}, "missing field(s): scale"),
    ({"s_L": [5.0, 5.0, 5.0, 5.0]}, "is impossible"),
    ({"format": "dplit.release/0"}, "format must be"),
    ({"eps1": -1}, "eps1"),
])
def test_bad_release_files_one_line_exit_2(tmp_path, rel_file, capsys, change, words):
    bad = _tamper(rel_file, tmp_path / "bad.json", **change)
    assert main(["analyse", str(bad), "--method", "dpboots", "--out", str(tmp_path / "o.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"dplit analyse: error: {bad}:") and words in err[-1]
    assert not (tmp_path / "o.nc").exists()


def test_other_bad_inputs(tmp_path, rel_file, capsys):
    out = tmp_path / "o.nc"
    assert main(["analyse", str(tmp_path / "missing.json"), "--method", "dpboots", "--out", str(out)]) == 2
    assert "missing.json: No such file or directory" in capsys.readouterr().err
    (tmp_path / "text.json").write_text("not json")
    assert main(["analyse", str(tmp_path / "text.json"), "--method", "dpboots", "--out", str(out)]) == 2
    assert "not a JSON release" in capsys.readouterr().err
    assert main(["analyse", str(rel_file), "--method", "dpboots", "--prior", "p1", "--out", str(out)]) == 2
    assert "--prior does not apply to method dpboots" in capsys.readouterr().err
    assert main(["analyse", str(rel_file), "--method", "dpboots", "--n-boot", "40", "--test", "0.5,0.5",
                 "--out", str(out)]) == 2
    assert "--test needs 4 values" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["analyse", str(rel_file), "--method", "nope", "--out", str(out)])


@pytest.mark.parametrize("method, extra, flag", [
    ("dpapprox", ["--part", "D1"], "--part"), ("dpboots", ["--n-accept", "50"], "--n-accept"),
    ("dpapprox", ["--n-boot", "50"], "--n-boot"), ("dpabc", ["--chains", "2"], "--n-chains"),
    ("dpabc", ["--n-iter", "100"], "--n-iter"), ("dpabc", ["--n-warmup", "10"], "--n-warmup"),
    ("dpmcmc", ["--n-accept", "50"], "--n-accept"), ("dpremcmc", ["--part", "D"], "--part"),
    ("dpboots", ["--prior", "p1"], "--prior"), ("dpboots", ["--n-chains", "1"], "--n-chains"),
])
def test_an_option_the_method_does_not_take_is_refused(tmp_path, rel_file, capsys, method, extra, flag):
    out = tmp_path / "o.nc"
    assert main(["analyse", str(rel_file), "--method", method, *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{flag} does not apply to method {method}" in err[0] and not out.exists()
    key = {"--part": "part", "--n-accept": "n_accept", "--n-boot": "n_boot", "--n-chains": "n_chains",
           "--n-iter": "n_iter", "--n-warmup": "n_warmup", "--prior": "prior"}[flag]
    with pytest.raises(ValueError, match=f"^{key} does not apply to method {method}"):
        analyse(Release.load(rel_file), method, **{key: extra[1]})


@pytest.mark.parametrize("extra, words", [
    (["--out", "NODIR/a.nc"], "the folder NODIR does not exist"),
    (["--out", "."], "is a folder"),
    (["--test", "0.5,0.5"], "--test needs 4 values"),
    (["--test", "0.4,0.2,0.25,1.5"], "--test must lie in the open interval"),
    (["--test", "0.4,0.2,0.25,0.15", "--delta", "-1"], "--delta"),
    (["--delta", "0.05"], "--delta is the tolerance of --test"),
    (["--level", "1.5"], "--level"),
    (["--n-boot", "0"], "--n-boot must be >= 1"),
    (["--n-boot", "1"], "--n-boot 1 is too few for a 95% interval"),
    (["--n-boot", "39"], "use --n-boot >= 40"),
    (["--n-boot", "19", "--level", "0.9"], "use --n-boot >= 20"),
])
def test_every_check_comes_before_any_work_or_file(tmp_path, rel_file, capsys, monkeypatch, extra, words):
    import dplit.bootstrap

    def no_work(*a, **k):
        raise AssertionError("computed before the arguments were checked")

    monkeypatch.setattr(dplit.bootstrap, "dp_boots", no_work)
    monkeypatch.chdir(tmp_path)
    argv = ["analyse", str(rel_file), "--method", "dpboots", *extra]
    if "--out" not in extra:
        argv += ["--out", "o.nc"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dplit analyse: error:") and words in err[0], err
    assert not any(tmp_path.iterdir())                           # nothing written


def test_summary_table_says_when_too_few_draws_for_the_level(rel_file):
    from dplit.cli import summary_table

    rel = Release.load(rel_file)
    alpha = np.random.default_rng(0).gamma(5.0, size=(1, 10, 4))
    idata = _arviz.to_arviz({"alpha": alpha, "mean_composition": alpha / alpha.sum(-1, keepdims=True)},
                             dims={"alpha": ["component"], "mean_composition": ["component"]},
                             coords={"component": list(rel.names)}, attrs={"method": "DPBoots"})
    assert "TOO FEW DRAWS: 10 for a 95% interval" in summary_table(idata, rel, level=0.95)
    assert "TOO FEW" not in summary_table(idata, rel, level=0.5)          # 10 >= ceil(2 / 0.5) = 4


def test_no_silent_overwrite(tmp_path, rel_file, capsys):
    out = tmp_path / "o.nc"
    out.write_text("keep me")
    assert main(["analyse", str(rel_file), "--method", "dpboots", "--out", str(out)]) == 2
    assert "exists (use --force" in capsys.readouterr().err and out.read_text() == "keep me"
    assert main(["analyse", str(rel_file), "--method", "dpboots", "--n-boot", "40", "--quiet", "--force",
                 "--out", str(out)]) == 0
    rel_out = tmp_path / "r.json"
    rel_out.write_text("keep")
    assert main(["release", str(EXAMPLE), "--close", "--eps1", "1", "--eps2", "1", "--out", str(rel_out)]) == 2
    assert rel_out.read_text() == "keep"
    capsys.readouterr()
    for bad, words in [(tmp_path / "nodir" / "r.json", "does not exist"), (tmp_path, "is a folder")]:
        assert main(["release", str(EXAMPLE), "--close", "--eps1", "1", "--eps2", "1", "--out", str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0]


def test_csv_messages(tmp_path, capsys):
    rounded = tmp_path / "rounded.csv"
    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=50)
    np.savetxt(rounded, X, fmt="%.4f", delimiter=",")
    out = tmp_path / "r.json"
    code = main(["release", str(rounded), "--eps1", "1", "--eps2", "1", "--out", str(out)])
    err = capsys.readouterr().err
    if code == 2:  # some row of the 4-decimal file misses 1 by more than 1e-6: the message says --close
        assert "--close divides each row" in err
    assert main(["release", str(rounded), "--close", "--eps1", "1", "--eps2", "1", "--out", str(out),
                 "--force"]) == 0
    header = tmp_path / "h.csv"
    header.write_text("a,b\n0.5,0.5,0.0\n")
    assert main(["release", str(header), "--eps1", "1", "--eps2", "1", "--out", str(out), "--force"]) == 2
    assert "line 2 has 3 columns, but the header (line 1) has 2" in capsys.readouterr().err


def test_default_candidates_drop_thresholds_at_or_above_one_over_d(tmp_path):
    X = np.random.default_rng(1).dirichlet(np.full(10, 3.0), size=300)
    data, out = tmp_path / "d10.csv", tmp_path / "r.json"
    np.savetxt(data, X, delimiter=",", fmt="%.17g")
    assert main(["release", str(data), "--eps1", "1", "--eps2", "1", "--out", str(out)]) == 0
    assert Release.load(out).candidates.max() < 0.1
    assert main(["release", str(data), "--eps1", "1", "--eps2", "1", "--candidates", "0.01,0.1",
                 "--out", str(out), "--force"]) == 2


def test_python_dash_m_dplit_and_help(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dplit", "analyse", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "dplit analyse release.json --method dpmcmc" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "dplit", "release", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "examples/minutes.csv" in proc.stdout and "--close" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "dplit", "analyse", str(tmp_path / "none.json"), "--method",
                           "dpboots", "--out", str(tmp_path / "o.nc")], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_top_level_entry_points_are_lazy():
    code = ("import sys, dplit; assert 'numba' not in sys.modules and 'arviz' not in sys.modules; "
            "names = dir(dplit); assert 'dp_mcmc' in names and 'Release' in names and 'bootstrap' not in names; "
            "assert not any(n.startswith('_') and not n.startswith('__') for n in names) and 'size' not in names; "
            "assert dplit.bootstrap.dp_boots is dplit.dp_boots; "
            "from dplit import dp_boots, Release; assert dplit.Release is Release; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    import dplit

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dplit.nope  # noqa: B018
    assert (ROOT / "dplit" / "py.typed").exists()


def test_every_top_level_entry_point_is_public_in_its_module():
    import importlib

    import dplit

    for name, module in dplit._ENTRY_POINTS.items():
        mod = importlib.import_module(f"dplit.{module}")
        assert name in mod.__all__, f"dplit.{name}: not in dplit.{module}.__all__"
        assert getattr(dplit, name) is getattr(mod, name)


def test_release_by_library_loads_in_cli(tmp_path, capsys):
    X = np.random.default_rng(2).dirichlet([2.0, 3.0, 4.0], size=300)
    rel = release(X, eps1=1.0, eps2=0.5, candidates=CANDS, tc=0.01, rng=1, secure=False)
    path = rel.save(tmp_path / "lib.json")
    assert main(["analyse", str(path), "--method", "dpboots", "--n-boot", "40", "--seed", "1", "--quiet",
                 "--out", str(tmp_path / "b.nc")]) == 0
    assert "alpha[0]" in capsys.readouterr().out  # no names: components numbered


def test_compare_writes_a_report_of_every_method(tmp_path, rel_file, capsys):
    out = tmp_path / "report.html"
    code = main(["compare", str(rel_file), "--seed", "1", "--methods", "dpboots,dpapprox,dpabc",
                 "--truth", "0.4,0.2,0.25,0.15", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and out.exists()
    page = out.read_text()
    for label in ("DPBoots", "DPapprox_p1", "DPABC_p1"):
        assert label in text and label in page
    header = next(line for line in text.splitlines() if line.split()[:1] == ["method"])  # release warnings may come first
    assert "converged" in header and "warm-up" in text and "warm-up" in page
    assert "data:image/png;base64," in page and "report written to" in text


@pytest.mark.parametrize("extra, words", [
    (["--methods", "dpmcmc,nope"], "--methods"), (["--priors", "p9"], "--priors"),
    (["--truth", "0.5,0.5"], "--truth needs 4 values"), (["--n-iter", "many"], "--n-iter"),
    (["--truth", "0.5,0.2,0.2,nan"], "--truth"),
    (["--methods", "dpboots,dpmcmc", "--n-iter", "50"], "dpboots run(s) no chain"),   # honoured or refused
    (["--methods", "dpmcmc", "--priors", "p3"], "cannot run DPMCMC_p3"),              # p3 needs a split release
])
def test_compare_refuses_bad_options_before_any_work(tmp_path, rel_file, capsys, extra, words):
    out = tmp_path / "report.html"
    assert main(["compare", str(rel_file), *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and not out.exists()


@pytest.mark.parametrize("argv, said", [
    (["analyse", "{rel}", "--method", "dpmcmc", "--prior", "P1", "--n-iter", "20"], "--prior must be one of"),
    (["analyse", "{rel}", "--method", "dpboots", "--seed", "-4"], "--seed must be a non-negative seed"),
    (["analyse", "{rel}", "--method", "dpmcmc", "--n-iter", "20", "--thin", "50"], "--thin must be <= --n-iter = 20"),
    (["compare", "{rel}", "--methods", ""], "--methods must name at least one method"),
    (["release", "{csv}", "--close", "--eps1", "1", "--eps2", "0"], "--eps2 must be finite and > 0"),
    (["release", "{csv}", "--close", "--eps1", "1", "--eps2", "1", "--tc", "1"], "--tc must lie in the open interval"),
])
def test_errors_name_the_flag_not_the_library_argument(tmp_path, rel_file, capsys, argv, said):
    out = tmp_path / ("o.html" if argv[0] == "compare" else "o.json" if argv[0] == "release" else "o.nc")
    argv = [a.format(rel=rel_file, csv=EXAMPLE) for a in argv] + ["--out", str(out)]
    if argv[0] == "analyse":
        argv.append("--no-progress")
    assert main(argv) == 2
    assert said in capsys.readouterr().err
    assert not out.exists()


def test_an_unknown_flag_is_named_before_a_missing_one(capsys):
    with pytest.raises(SystemExit) as info:
        main(["release", str(EXAMPLE), "--epsilon", "1", "--out", "r.json"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --epsilon (did you mean --eps" in err and "required: --eps1, --eps2" in err


def test_study_store_may_not_be_the_config(tmp_path, capsys):
    cfg = tmp_path / "study.toml"
    cfg.write_text("[study]\n")
    assert main(["study", "run", "--config", str(cfg), "--store", str(cfg), "--no-progress"]) == 2
    assert "--store" in capsys.readouterr().err and cfg.read_text() == "[study]\n"
