# Hand-written module (not generated from a notebook).
"""dplit: differentially private statistical inference, taught as literate notebooks.

Most modules in this package are generated from the notebooks in ``notebooks/``
(see the header of each file); ``config``, ``results``, ``_validate``, ``testing``,
``export`` and ``cli`` are written by hand.

``TIERS`` groups the modules in six named tiers (infrastructure, privacy, models, methods,
applications, interfaces), each a sequence of layers; ``LAYERS`` is their concatenation. A module
may import only modules of a lower layer (never one of its own layer or above), so there are no
import cycles, and never another module's private (``_``) names: what two modules share is public
in the lower one. ``tests/test_layering.py`` checks every module of the package against both rules.
"""

__version__ = "0.1.0"

TIERS = (
    ("infrastructure", (
        ("config", "export"),               # hand-written, no dplit imports
        ("_validate", "results"),           # argument checks; the one ArviZ adapter and the result contract
        ("sampling",),                      # 06b: the one multi-chain driver, the reproducible parallel map
    )),
    ("privacy", (
        ("audit",),                         # 01a: a lower confidence bound on the epsilon a mechanism spends
        ("mechanisms",),                    # 01: noise (re-exports 01a)
        ("accounting",),                    # 01b: budgets, RDP, zCDP
        ("testing",),                       # statistical checks (SBC, goodness of fit, audits)
    )),
    ("models", (
        ("dirichlet_fit",),                 # 02a: the range of S0, numba special functions, the MLE
        ("dirichlet_random",),              # 02b: Dirichlet and gamma draws in numba
        ("dirichlet",),                     # 02: the model, statistics, likelihood (re-exports 02a-02b)
        ("censoring",),                     # 03
        ("release_record",),                # 04a: the published record, its checks and JSON
        ("release",),                       # 04: the curator's side (re-exports 04a)
        ("nested_model",),                  # 16a: the nested households model and its summaries' probabilities
    )),
    ("methods", (
        ("_truncated_noise",),              # 05a: step 1 of DPBoots, the truncated noise (numba kernels and their twins)
        ("bootstrap",),                     # 05: Boots, DPBoots, intervals and the two-sample test (uses 05a)
        ("priors",),                        # 06: p1-p5, each owns its kernel density (p2 from DPBoots)
        ("_mcmc_moves",),                   # 07a: the moves of an MCMC iteration (numba kernels and their twins)
        ("mcmc",),                          # 07: MCMC, DPMCMC, DPreMCMC, p5
        ("abc", "approx"),                  # 08-09
        ("dirichlet_mechanism",),           # 12
        ("_augmentation_engines",),         # 13a: dapper's record sweep, its three engines, module compilation
        ("augmentation",),                  # 13: the privacy model and dapper_sample (re-exports 13a)
        ("_latent_class_model",),           # 14a: cells, marginal probabilities, the sampler's blocks (numba kernels)
        ("latent_class",),                  # 14: margins released, fit_latent_class, inference (re-exports 14a)
        ("margin_selection", "nested"),     # 15: PrivBayes' structure stage; 16: nested households (re-exports 16a)
        ("methods",),                       # 17: the registry, one dispatcher, compare
    )),
    ("applications", (
        ("datasets",),                      # data loaders (hand-written, one user cache)
        ("study_store",),                   # 10a: the study's stores (text table, SQLite) and resumable runner
        ("study",),                         # 10: the simulation study runner (re-exports 10a)
        ("atus",),                          # 11: the ATUS application (uses datasets, study)
        ("dapper_examples",),               # 13b: the modules of dapper's Examples 1 and 3
        ("peers",),                         # 15b: private-pgm and PrivBayes side by side
    )),
    ("interfaces", (
        ("cli",),                           # the command line: may use anything
        ("__main__",),                      # `python -m dplit`: the command line
    )),
)
LAYERS = tuple(layer for _, layers in TIERS for layer in layers)

# The main entry points, importable as ``dplit.<name>``. They load lazily (module ``__getattr__``),
# so ``import dplit`` stays cheap (no numba, ArviZ or SciPy until a name is used). Names that are
# also module names (``release``, ``mcmc``) stay in their modules: ``dplit.release.release``.
_ENTRY_POINTS = {
    "Release": "release_record", "dp_boots": "bootstrap", "boots": "bootstrap", "two_sample_test": "bootstrap",
    "make_prior": "priors", "GammaPrior": "priors", "dp_mcmc": "mcmc", "dp_remcmc": "mcmc",
    "p5_prior": "mcmc", "dp_abc": "abc", "dp_approx": "approx", "dapper_sample": "augmentation",
    "PrivacyModel": "augmentation", "laplace_mechanism": "mechanisms", "geometric_mechanism": "mechanisms",
    "PrivacyBudget": "accounting", "dirichlet_mle": "dirichlet_fit", "check_compositions": "dirichlet",
    "size": "config", "to_netcdf": "results", "from_netcdf": "results",
    "release_margins": "latent_class", "fit_latent_class": "latent_class",
    "select_margins": "margin_selection", "select_and_release": "margin_selection",
    "fit_nested": "nested", "release_summaries": "nested", "synthesize_households": "nested",
    "NestedParams": "nested_model", "compare": "methods", "fit": "methods", "REGISTRY": "methods",
}
def _present(module):
    """True when the module's file is in the package (later layers appear as their notebooks land)."""
    import os

    return os.path.exists(os.path.join(os.path.dirname(__file__), module + ".py"))


_MODULES = tuple(m for layer in LAYERS for m in layer if m != "__main__")


def __getattr__(name):
    import importlib

    if name in _ENTRY_POINTS and _present(_ENTRY_POINTS[name]):
        value = getattr(importlib.import_module(f"dplit.{_ENTRY_POINTS[name]}"), name)
        globals()[name] = value
        return value
    if name in _MODULES and _present(name):
        return importlib.import_module(f"dplit.{name}")
    raise AttributeError(f"module 'dplit' has no attribute {name!r}")


def __dir__():
    names = {k for k, m in _ENTRY_POINTS.items() if _present(m)} | {m for m in _MODULES if _present(m)}
    return sorted(set(globals()) | names)
