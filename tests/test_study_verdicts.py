"""Tests of the verdict rules and the method styles of dplit.study_summary (the paper's words as fixed tests)."""

import matplotlib
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from dplit import study, study_summary
from dplit.study_summary import (
    METHOD_STYLE,
    check_method_style,
    similar,
    slightly_larger,
    unconverged,
    verdict,
)

matplotlib.use("Agg")

PAPER_NAMES = {"Boots", "DPBoots", "MCMC_p1", *(f"DPMCMC_{p}" for p in ("p1", "p3", "p4")),
               *(f"DPreMCMC_{p}" for p in ("p1", "p3", "p4")), *(f"DPABC_p{k}" for k in range(1, 6)),
               *(f"DPapprox_{p} (blocked)" for p in ("p1", "p3", "p4")), "DPapprox_p4 (Gibbs)"}


def test_every_registered_method_has_its_own_colour_and_the_papers_name():
    assert set(METHOD_STYLE) == set(study.METHODS)
    assert len({to_rgb(v["color"]) for v in METHOD_STYLE.values()}) == len(study.METHODS)
    assert {v["label"] for v in METHOD_STYLE.values()} == PAPER_NAMES     # DPapprox's names say the sampler
    assert check_method_style(METHOD_STYLE) is METHOD_STYLE


@pytest.mark.parametrize("plant, match", [
    (lambda s: {m: dict(v, color="k") if m in ("boots", "mcmc_p1") else v for m, v in s.items()}, "share"),
    (lambda s: {m: dict(v, color="#1f77b4") if m == "dpremcmc_p1" else v for m, v in s.items()}, "share"),
    (lambda s: {m: dict(v, label=m) for m, v in s.items()}, "paper's name"),
    (lambda s: {m: v for m, v in s.items() if m != "dpmcmc_p4"}, "missing"),
])
def test_check_method_style_refuses_planted_bad_mappings(plant, match):
    with pytest.raises(ValueError, match=match):
        check_method_style(plant(METHOD_STYLE))


def test_figures_draw_each_method_in_its_style():
    rows = [dict(alpha="(1, 1)", n=100, eps=e, threshold="dp", method=m, runs=5, failed=0, converged=1.0,
                 mse_alpha=v, mse_mean=v, coverage=0.9, runtime=1.0)
            for e in (1.0, 1e10) for m, v in (("boots", 1.0), ("mcmc_p1", 1.1), ("dpmcmc_p1", 2.0))]
    fig = study_summary.figure_mse(pd.DataFrame(rows), methods=["boots", "mcmc_p1", "dpmcmc_p1"])
    ax = next(a for a in fig.axes if a.get_title())
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Boots", "MCMC_p1", "DPMCMC_p1"]
    colours = {p.get_facecolor()[:3] for p in ax.patches}
    assert colours == {to_rgb(METHOD_STYLE[m]["color"]) for m in ("boots", "mcmc_p1", "dpmcmc_p1")}
    assert len(colours) == 3                     # Boots and MCMC_p1 no longer share black


def test_similar_is_within_two_either_way():
    assert similar([1.0, 1.98, 0.51])
    assert not similar([4.59]) and not similar([0.49]) and not similar([])


def test_slightly_larger_is_larger_and_within_two():
    assert slightly_larger([1.98, 1.5, 0.9])
    assert not slightly_larger([1.2, 4.59])          # the planted case the old bound of 5 let pass
    assert slightly_larger([1.2, 4.59], factor=5)
    assert not slightly_larger([0.8, 0.9, 1.5])      # mostly smaller: not "larger"
    assert not slightly_larger([])


def test_a_method_without_converged_runs_makes_the_statement_not_decided():
    summary = pd.DataFrame([dict(alpha="a", n=5000, eps=e, threshold="dp", method=m, runs=20, converged=c)
                            for m, e, c in [("dpremcmc_p1", 1.5, 0.0), ("dpremcmc_p1", 0.5, 0.4),
                                            ("dpmcmc_p1", 1.5, 1.0), ("dpmcmc_p1", 0.5, 1.0)]])
    cells = [("a", 5000, 1.5), ("a", 5000, 0.5)]
    gaps = unconverged(summary, ["dpmcmc_p1", "dpremcmc_p1"], cells)
    assert gaps == [{"method": "dpremcmc_p1", "alpha": "a", "n": 5000, "eps": 1.5, "runs": 20}]
    line = verdict(True, "ratios 1.1", missing=gaps)
    assert line.startswith("not decided: DPreMCMC_p1 converged in 0 of 20 runs at n = 5000, eps = 1.5")
    assert "on the converged cells alone: agrees: ratios 1.1" in line
    assert unconverged(summary, ["dpmcmc_p1"], cells) == []
    assert verdict(True, "ratios 1.1") == "agrees: ratios 1.1"
    assert verdict(False, "x") == "differs: x"
    assert verdict(True, "x", have=False).startswith("not decided: no cell")
