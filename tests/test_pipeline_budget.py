"""One privacy ledger through a whole pipeline (issue 27, item 3): private selection of margins, their release,
and a latent-class fit of the release.

``select_and_release`` charges one ``PrivacyBudget``; the selection and the release each carry their own ledger
(``sel.budget``, ``rel.budget``); the fitted result reports the release's ledger (``attrs["eps_by_part"]``,
read with ``dplit.results.ledger``) and total (``attrs["eps_total"]``). ``pipeline_problems`` checks that all of
these agree, and the last tests show it (and the library) catching planted deviations, so that a passing run
means something.
"""

import dataclasses
import math
import warnings

import numpy as np
import pytest

from dplit import _arviz, results
from dplit.accounting import BudgetExceededError, PrivacyBudget
from dplit.latent_class import MarginRelease, fit_latent_class
from dplit.margin_selection import sample_network, select_and_release

EPS = 2.0
TAB = sample_network([(0, ()), (1, (0,)), (2, (0, 1)), (3, (1, 2)), (4, (2, 3))], 800, rng=0)
FIT = dict(k=2, n_iter=100, n_warmup=50, n_chains=1, rng=3, progress=False)


def _fit(release):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # a tiny run: the ledger, not convergence, is checked
        return fit_latent_class(release, **FIT)


@pytest.fixture(scope="module")
def pipeline():
    ledger = PrivacyBudget(EPS)
    sel, rel = select_and_release(TAB, EPS, rng=1, secure=False, budget=ledger)
    return ledger, sel, rel, _fit(rel)


def pipeline_problems(ledger, sel, rel, fit):
    """What disagrees between the ledger charged, the selection's and release's own ledgers and the fit's attrs."""
    out = []
    own = sel.budget.entries + rel.budget.entries
    if ledger.entries != own:
        out.append("the ledger's charges are not the selection's followed by the release's")
    if not math.isclose(ledger.spent, sel.eps_total + rel.eps_total, rel_tol=1e-12):
        out.append(f"the ledger spent {ledger.spent} but selection + release claim {sel.eps_total + rel.eps_total}")
    for name, part in (("selection", sel), ("release", rel)):
        if not math.isclose(part.budget.spent, part.eps_total, rel_tol=1e-12):
            out.append(f"the {name}'s ledger spends {part.budget.spent} but it claims {part.eps_total}")
    at = _arviz.group(fit, "posterior").attrs
    if not math.isclose(float(at["eps_total"]), rel.eps_total, rel_tol=1e-12):
        out.append(f"the fit reports eps_total {at['eps_total']} but the release spent {rel.eps_total}")
    if results.ledger(fit) != {e.label: e.eps for e in rel.budget.entries}:
        out.append("the fit's eps_by_part is not the release's ledger")
    return out + results.check_contract(fit)


def test_the_pipeline_spends_eps_and_every_part_says_so(pipeline):
    ledger, sel, rel, fit = pipeline
    assert pipeline_problems(ledger, sel, rel, fit) == []
    assert ledger.spent == pytest.approx(EPS, rel=1e-12) and ledger.remaining == pytest.approx(0.0, abs=1e-12)
    p = TAB.shape[1]
    assert len(sel.budget.entries) == p - 1 and len(rel.budget.entries) == len(sel.pairs) == 1 + 2 * (p - 2)
    assert sel.eps_total == pytest.approx(0.25 * EPS) and rel.eps_total == pytest.approx(0.75 * EPS)
    assert math.fsum(e.eps for e in sel.budget.entries + rel.budget.entries) == pytest.approx(EPS, rel=1e-12)
    at = _arviz.group(fit, "posterior").attrs
    assert at["eps_total"] == pytest.approx(rel.eps_total) and at["method"] == "latent_class"
    parts = results.ledger(fit)
    assert list(parts) == [f"margin {m}: geometric mechanism, sensitivity 2" for m in rel.margins]
    assert math.fsum(parts.values()) == pytest.approx(rel.eps_total, rel=1e-12)


def test_a_pipeline_that_does_not_fit_spends_nothing():
    ledger = PrivacyBudget(EPS)
    ledger.spend(0.5, "an earlier release")
    gen = np.random.default_rng(4)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError, match="select_and_release needs eps = 2"):
        select_and_release(TAB, EPS, rng=gen, secure=False, budget=ledger)
    assert len(ledger.entries) == 1 and gen.bit_generator.state == state


# --- the checks catch planted deviations ------------------------------------------------------------------------

def test_a_release_claiming_less_than_it_spent_is_caught(pipeline):
    ledger, sel, rel, _ = pipeline
    cheap = dataclasses.replace(rel, eps=rel.eps / 2, checked=False)   # the same counts, half the claimed budget
    problems = pipeline_problems(ledger, sel, cheap, _fit(cheap))
    assert any("not the selection's followed by the release's" in p for p in problems), problems
    assert any("selection + release claim" in p for p in problems), problems


def test_a_release_whose_ledger_disagrees_with_its_claim_is_refused_by_the_fit(pipeline):
    _, _, rel, _ = pipeline

    class Underreported(MarginRelease):
        """Charges its ledger for every table but the first, while claiming the whole eps."""

        @property
        def budget(self):
            ledger = PrivacyBudget(self.eps)
            for m in self.margins[1:]:
                ledger.spend(self.eps_per_table, f"margin {m}")
            return ledger

    shady = Underreported(**{f.name: getattr(rel, f.name) for f in dataclasses.fields(rel)})
    with pytest.raises(ValueError, match=r"claims eps_total = 1.5 but carries a ledger that spends eps = 1.2857.*disagree"):
        _fit(shady)
    with pytest.raises(ValueError, match="claims eps_total = 1.5 but carries no ledger"):
        results.privacy_attrs(type("Bare", (), {"budget": None, "eps_total": 1.5})())


def test_a_fit_reporting_another_budget_is_caught(pipeline):
    ledger, sel, rel, _ = pipeline
    forged = _fit(rel)
    for name in _arviz.groups(forged):
        forged[name].attrs["eps_total"] = EPS                    # the pipeline's total, not the release's
    problems = pipeline_problems(ledger, sel, rel, forged)
    assert any("the fit reports eps_total 2.0" in p for p in problems), problems
    assert any("eps_by_part sums to" in p for p in problems), problems
