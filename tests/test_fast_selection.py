"""`make test-fast` selects the tests and notebooks a change touches, through the import graph."""

from scripts.fast_tests import dplit_imports, selection


def test_a_changed_module_selects_its_callers_tests_and_notebooks():
    targets, affected = selection(["dplit/priors.py"])
    assert {"priors", "mcmc", "abc", "approx", "methods", "cli"} <= affected   # mcmc imports priors, methods mcmc
    assert {"tests/test_priors.py", "tests/test_mcmc.py", "notebooks/21_mcmc.ipynb"} <= set(targets)
    assert "tests/test_dirichlet_mechanism.py" not in targets      # imports nothing that imports priors
    assert "notebooks/30_dirichlet_mechanism.ipynb" not in targets


def test_a_changed_notebook_selects_its_module_and_itself():
    targets, affected = selection(["notebooks/17_bootstrap.py"])
    assert "bootstrap" in affected and "notebooks/17_bootstrap.ipynb" in targets
    assert "tests/test_bootstrap.py" in targets and "tests/test_literate.py" in targets
    paper_only, affected = selection(["notebooks/papers/80_guo_simulation_study.ipynb"])
    assert affected == set() and "notebooks/papers/80_guo_simulation_study.ipynb" in paper_only


def test_entry_points_count_as_their_modules():
    assert dplit_imports("from dplit import dp_mcmc, Release\nimport dplit.sampling") == {
        "mcmc", "release_record", "sampling"}
    assert dplit_imports("%matplotlib inline\nfrom dplit.abc import dp_abc") == {"abc"}
