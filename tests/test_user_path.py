"""An analyst's first hour (issue 45): warnings that travel, library defaults that match the CLI, one summary,
the attrs where a user looks, `dplit show`, the pre-spend noise check, and what `compare` shows and refuses."""

import inspect
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import dplit
from dplit import methods, results
from dplit.cli import main, summary_table
from dplit.release import Release, noise_ratio, noise_warning, release

CANDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1]


def _quiet_release(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return release(X, **{"eps1": 0.75, "eps2": 0.25, "secure": False, "rng": 1, **kw})


@pytest.fixture(scope="module")
def big():
    """A release that is not mostly noise (n = 2000, d = 3), with named components."""
    X = np.random.default_rng(5).dirichlet([4.0, 2.0, 3.0], size=2000)
    return _quiet_release(pd.DataFrame(X, columns=["sleep", "work", "leisure"]))


@pytest.fixture(scope="module")
def small():
    """The 25-composition example of issue 45 (d = 5): mostly noise, scale 3.7."""
    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0, 1.0, 1.0], size=25)
    return _quiet_release(X)


# --- item 4: warnings before spending ---------------------------------------------------------------------------

def test_noise_warning_triggers_on_25_compositions_and_not_on_a_large_release():
    assert np.isclose(dplit.release.laplace_scale(5, 1e-6, 25, 0.75), 3.684, atol=1e-3)
    text = noise_warning(25, 5, 0.75)
    assert text and "mostly noise" in text and "n >= 81" in text and "eps1 >= 2.43" in text
    assert noise_warning(2000, 3, 0.75) is None and noise_warning(5000, 5, 0.75, CANDS) is None
    # the numbers it asks for are enough, one fewer record is not
    assert noise_ratio(81, 5, 0.75, 1e-6) <= 1 < noise_ratio(80, 5, 0.75, 1e-6)


def test_noise_warning_uses_public_numbers_only():
    # the signature takes no data: the pre-check cannot spend privacy
    assert list(inspect.signature(noise_warning).parameters) == ["n", "d", "eps1", "candidates"]


def test_release_warns_before_noise_and_keeps_the_warning(small, big):
    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0, 1.0, 1.0], size=25)
    with pytest.warns(UserWarning, match="mostly noise"):
        release(X, eps1=0.75, eps2=0.25, secure=False, rng=1)
    assert any("mostly noise" in w for w in small.warnings)
    assert not any("mostly noise" in w for w in big.warnings)


def test_cli_release_refuses_mostly_noise_without_force(tmp_path, capsys):
    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0, 1.0, 1.0], size=25)
    csv = tmp_path / "small.csv"
    np.savetxt(csv, X, delimiter=",", fmt="%.17g")
    out = tmp_path / "small.json"
    assert main(["release", str(csv), "--eps1", "0.75", "--eps2", "0.25", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "mostly noise" in err and "n >= 81" in err and not out.exists()
    assert main(["release", str(csv), "--eps1", "0.75", "--eps2", "0.25", "--out", str(out), "--force"]) == 0
    captured = capsys.readouterr()
    both = captured.out + captured.err
    assert both.count("mostly noise") == 1                     # printed once, not twice
    assert any("mostly noise" in w for w in Release.load(out).warnings)


# --- item 1: the warnings travel ------------------------------------------------------------------------------

def test_warnings_round_trip_and_old_files_load(small):
    again = Release.from_json(small.to_json())
    assert again.warnings == small.warnings and again == small
    old = small.to_dict()
    del old["warnings"]
    assert Release.from_dict(old).warnings == ()               # a file written before the field still loads
    edited = small.to_dict() | {"warnings": ["edited by hand"]}
    assert Release.from_dict(edited).warnings == ("edited by hand",)   # free text: not a tamper check
    with pytest.raises(TypeError, match="warnings"):
        Release.from_dict(small.to_dict() | {"warnings": "one string"})


def test_release_warnings_reach_the_result_and_the_analyst(small, tmp_path):
    with pytest.warns(UserWarning, match="release warning: the release would be mostly noise"):
        res = methods.fit(small, "dpboots", rng=1, n_boot=100)
    told = results.release_warnings(res)
    assert told == list(small.all_warnings()) and any("mostly noise" in w for w in told)
    assert json.loads(res.attrs["release_warnings"]) == told                  # result.attrs, not only the posterior's
    assert any("RELEASE WARNING: the release would be mostly noise" in line for line in dplit.summary(res).attrs["notes"])
    path = results.to_netcdf(res, tmp_path / "r.nc")
    back = results.from_netcdf(path)
    assert results.release_warnings(back) == told and back.attrs["method"] == "DPBoots"


# --- item 2: one behaviour for library and CLI ------------------------------------------------------------------

def test_release_defaults_and_dataframe_names(big):
    assert inspect.signature(release).parameters["candidates"].default is None
    assert inspect.signature(release).parameters["tc"].default == 0.01
    assert big.names == ("sleep", "work", "leisure")
    explicit = _quiet_release(pd.DataFrame(np.full((300, 2), 0.5), columns=["a", "b"]), names=["x", "y"])
    assert explicit.names == ("x", "y")


def test_result_attrs_hold_the_contract(big):
    res = methods.fit(big, "dpboots", rng=1, n_boot=100)
    assert res.attrs["method"] == "DPBoots" and res.attrs["eps_total"] == big.eps_total
    assert dplit.attrs_of(res)["method"] == "DPBoots"


def test_summary_is_the_cli_table(big):
    res = methods.fit(big, "dpboots", rng=1, n_boot=200)
    table = dplit.summary(res)
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["mean", "sd", "lower", "upper", "rhat", "ess"]
    assert list(table.index[:3]) == ["alpha[sleep]", "alpha[work]", "alpha[leisure]"]
    x = results.draws(res, "mean_composition")
    assert np.allclose(table.loc["E[x][work]", ["lower", "upper"]], np.quantile(x[:, 1], [0.025, 0.975]))
    text = str(table)
    assert "95% low" in text and "privacy spent eps1 + eps2 = 0.75 + 0.25 = 1" in text
    assert summary_table(res, big) == text == table.to_text()
    assert "90% low" in str(dplit.summary(res, level=0.9))


def test_n_iter_auto_is_the_default_of_every_chain():
    from dplit.approx import dp_approx
    from dplit.mcmc import dp_mcmc, dp_remcmc

    for fn in (dp_mcmc, dp_remcmc, dp_approx):
        assert inspect.signature(fn).parameters["n_iter"].default == "auto", fn.__name__
    for name in ("dpmcmc", "dpremcmc", "dpapprox"):
        assert methods.REGISTRY[name].defaults["n_iter"] == "auto"


# --- item 3: dplit show -----------------------------------------------------------------------------------------

def test_show_prints_what_a_release_holds_spent_and_allows(small, big, tmp_path, capsys):
    split = _quiet_release(np.random.default_rng(2).dirichlet([4.0, 2.0, 3.0], size=2000), n1=500)
    for rel, name in ((small, "small.json"), (split, "split.json")):
        rel.save(tmp_path / name)
    assert main(["show", str(tmp_path / "small.json")]) == 0
    text = capsys.readouterr().out
    for word in ("n = 25 records", "d = 5 components", "threshold a =", "0.75", "total eps = 1", "WARNING",
                 "mostly noise", "--method dpmcmc --prior p1", "dplit compare", "need a split release"):
        assert word in text, word
    assert main(["show", str(tmp_path / "split.json")]) == 0
    text = capsys.readouterr().out
    assert "split: D1 = 500 records" in text and "p1, p3, p4, p5" in text and "need a split release" not in text
    assert main(["show", str(tmp_path / "missing.json")]) == 2


# --- item 5: compare shows what matters and checks first ------------------------------------------------------------

@pytest.fixture
def no_fit(monkeypatch):
    """Make any method run fail: a check that comes 'before any work' must raise before this."""
    def boom(*args, **kwargs):
        raise AssertionError("a method ran before the arguments were checked")
    monkeypatch.setattr(methods, "fit", boom)


@pytest.mark.parametrize("kwargs, words", [
    (dict(methods=["dpboots", "nope"]), "method"),
    (dict(methods=["dpboots"], truth=[0.5, 0.5]), "truth"),
    (dict(methods=["dpboots"], truth=[0.5, 0.2, np.nan]), "truth"),
    (dict(methods=["dpboots"], truth=[0.5, 0.5, 0.5]), "summing to 1"),          # not a mean composition
    (dict(methods=["dpmcmc"], priors=("p3",)), "cannot run DPMCMC_p3"),
    (dict(methods=["dpapprox"], priors=("p5",)), "cannot run DPapprox_p5"),
    (dict(methods=["dpboots"], settings={"dpboots": {"n_iter": 5}}), "dpboots does not take n_iter"),
    (dict(methods=["dpboots"], unavailable="skip"), "unavailable"),
])
def test_compare_refuses_before_any_work(big, no_fit, kwargs, words):
    with pytest.raises((ValueError, TypeError), match=words.replace("(", r"\(")):
        methods.compare(big, **kwargs)


def test_compare_reads_a_string_as_one_method_and_reports_what_cannot_run(big):
    one = methods.compare(big, "dpboots", rng=1, settings={"dpboots": {"n_boot": 100}})
    assert list(one.results) == ["DPBoots"]
    rep = methods.compare(big, ["dpboots", "dpabc"], priors=("p1", "p3"), rng=1, unavailable="report",
                          settings={"dpboots": {"n_boot": 100}, "dpabc": {"n_accept": 100, "accept_rate": 0.2}})
    row = rep.table[rep.table["method"] == "DPABC_p3"]
    assert len(row) == 1 and "split release" in row["note"].iloc[0] and list(rep.results) == ["DPBoots", "DPABC_p1"]


def test_compare_marks_a_chain_that_did_not_converge(small):
    cmp = methods.compare(small, ["dpboots", "dpapprox"], rng=3, progress=False,
                          settings={"dpboots": {"n_boot": 200}, "dpapprox": {"n_iter": 12, "n_warmup": 20,
                                                                             "n_chains": 4, "thin": 1}})
    assert "converged" in cmp.table and cmp.not_converged() == ["DPapprox_p1"]
    (line,) = cmp.warnings()
    assert line.startswith("DPapprox_p1 did not converge")
    assert cmp.release_warnings == small.all_warnings()
    page = cmp.to_html()
    assert page.count('class="notconverged"') == small.d               # its rows, and only its rows
    assert "white-space:pre-wrap" in page and "thinned by 1" in page and "warm-up of 20" in page
    assert "mostly noise" in page and "Not converged" in page
    from dplit.cli import compare_text

    text = compare_text(cmp)
    assert text.startswith("RELEASE WARNING") and " NO " in text and "WARNING: DPapprox_p1 did not converge" in text
    # intervals that do not overlap get one sentence per method, saying why
    cmp.table.loc[cmp.table["method"] == "DPBoots", ["lower", "upper"]] += 10.0
    why = cmp.explanations()
    assert len(why) == 2 and why[0].startswith("DPBoots: DPBoots gives a frequentist") and "did not mix" in why[1]


# --- item 3: exact zeros, and the advice that reaches the analyst ------------------------------------------------

def _time_use_with_zeros(n=2000, share=0.15, seed=3):
    """Time-use shares (sleep, work, leisure, other) where a share of the days has no work at all."""
    rng = np.random.default_rng(seed)
    X = rng.dirichlet([4.5, 2.0, 2.5, 1.0], size=n)
    off = rng.random(n) < share
    X[off, 1] = 0.0
    X[off] /= X[off].sum(axis=1, keepdims=True)
    return pd.DataFrame(X, columns=["sleep", "work", "leisure", "other"])


def test_exact_zeros_warn_the_curator_and_reach_the_analyst(tmp_path, capsys):
    df = _time_use_with_zeros()
    with pytest.warns(UserWarning, match="exact zeros"):
        rel = release(df, eps1=1.0, eps2=0.5, rng=7)
    told = " ".join(rel.warnings)
    assert "exact zeros" in told and "work" in told and "Smaller candidates make this worse" in told
    assert "consider smaller candidates" not in told                     # the old advice pointed the wrong way
    with pytest.warns(UserWarning, match="release warning: .*exact zeros"):
        res = methods.fit(rel, "dpboots", rng=1, n_boot=100)
    assert any("exact zeros" in w for w in results.release_warnings(res))
    assert any("exact zeros" in line for line in dplit.summary(res).attrs["notes"])
    path = tmp_path / "rel.json"
    rel.save(path)
    assert main(["show", str(path)]) == 0 and "exact zeros" in capsys.readouterr().out
    # the planted contrast: the same days without zeros give no such warning
    clean = _time_use_with_zeros(share=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = release(clean, eps1=1.0, eps2=0.5, rng=7)
    assert quiet.warnings == () and quiet.caution() is None
