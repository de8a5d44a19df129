# Hand-written module (not generated from a notebook).
"""dplit: differentially private statistical inference, taught as literate notebooks.

Most modules in this package are generated from the library notebooks ``notebooks/NN_topic.py``, one
module each, named after it and numbered in import order (see the header of each file); ``config``,
``_arviz``, ``_files``, ``diagnostics``, ``results``, ``_validate``, ``testing``, ``datasets``, ``export`` and ``cli``
are written by hand.

``PARTS`` groups the modules by what they serve: the shared core, then one part per paper
(compositional data, the Dirichlet mechanism, dapper's data augmentation, latent classes), then the
methods side by side with the studies, then the interfaces. Each part is a sequence of layers;
``LAYERS`` is their concatenation. A module may import only modules of a lower layer (never one of
its own layer or above), so there are no import cycles, and never another module's private (``_``)
names: what two modules share is importable from the lower one (a name without ``_``), while only
what a user calls is in a module's ``__all__`` (``#| internal`` in a notebook keeps a building block
out of it; a ``_`` module has none). The notebooks' numbers follow the same
order (a module never imports the module of a higher-numbered notebook), and their tens digit names
the part: 0x core, 1x-2x compositional data, 3x the Dirichlet mechanism, 4x dapper, 5x latent
classes, 6x methods and studies. ``tests/test_layering.py`` checks every module against these rules.
"""

__version__ = "0.1.0"

PARTS = (
    ("core", (                              # what every paper's methods stand on
        ("config", "export", "datasets", "_files"),  # hand-written, no dplit imports: size switch, exporter, data
                                            # loaders, the one rule for every file dplit writes (atomic, exclusive)
        ("_validate", "_arviz"),            # argument checks; the one ArviZ adapter (every call of ArviZ, xarray)
        ("diagnostics",),                   # rank-normalised R-hat, bulk and tail ESS over all coordinates at once
        ("results",),                       # the result contract, draws, netCDF files
        ("audit",),                         # 01: a lower confidence bound on the epsilon a mechanism spends
        ("mechanisms",),                    # 02: noise (re-exports 01)
        ("accounting",),                    # 03: budgets, RDP, zCDP
        ("sampling",),                      # 04: the one multi-chain driver, the reproducible parallel map
        ("testing",),                       # hand-written: statistical checks (SBC, goodness of fit, audits)
    )),
    ("compositional data (Guo, Barrientos & Pena)", (
        ("dirichlet_fit",),                 # 10: the range of S0, numba special functions, the MLE
        ("dirichlet_random",),              # 11: Dirichlet and gamma draws in numba
        ("dirichlet",),                     # 12: the model, statistics, likelihood (re-exports 10-11)
        ("censoring",),                     # 13
        ("release_record",),                # 14: the published record, its checks and JSON
        ("release",),                       # 15: the curator's side (re-exports 14)
        ("_truncated_noise",),              # 16: step 1 of DPBoots, the truncated noise (numba kernels and twins)
        ("bootstrap",),                     # 17: Boots, DPBoots, intervals and the two-sample test
        ("priors",),                        # 18: p1-p5, each owns its kernel density (p2 from DPBoots)
        ("_mcmc_moves",),                   # 19: the moves of an MCMC iteration (numba kernels and twins)
        ("_release_model",),                # 20: the model of a release: checks, prior, likelihood blocks, start (shared by mcmc, abc, approx)
        ("mcmc",),                          # 21: MCMC, DPMCMC, DPreMCMC, p5
        ("abc", "approx"),                  # 22-23: DPABC, DPapprox
    )),
    ("the Dirichlet mechanism", (
        ("dirichlet_mechanism",),           # 30
    )),
    ("data augmentation (dapper)", (
        ("_augmentation_engines",),         # 40: dapper's record sweep, its three engines, module compilation
        ("augmentation",),                  # 41: the privacy model and dapper_sample (re-exports 40)
    )),
    ("latent classes (Nixon, Barrientos, Reiter & Slavkovic)", (
        ("_latent_class_model",),           # 50: cells, marginal probabilities, the sampler's blocks (numba)
        ("latent_class",),                  # 51: margins released, fit_latent_class, inference (re-exports 50)
        ("margin_selection", "peers", "nested_model"),  # 52: PrivBayes' structure stage; 53: peers; 54: households
        ("nested",),                        # 55: nested households from noisy summaries (re-exports 54)
    )),
    ("methods and studies", (
        ("methods",),                       # 60: the registry, one dispatcher, compare
        ("study_store",),                   # 61: the study's stores (text table, SQLite) and resumable runner
        ("study",),                         # 62: the simulation study runner (re-exports 61)
        ("atus",),                          # 63: the ATUS application (uses datasets, study)
        ("study_summary",),                 # 64: the study's summaries and the paper's figures, from a store
    )),
    ("interfaces", (
        ("cli",),                           # the command line: may use anything
        ("__main__",),                      # `python -m dplit`: the command line
    )),
)
LAYERS = tuple(layer for _, layers in PARTS for layer in layers)

# What a user calls, importable as ``dplit.<name>``: the entry points of each part, the release record and the results
# helpers. They load lazily (module ``__getattr__``), so ``import dplit`` stays cheap (no numba, ArviZ or SciPy until a
# name is used). ``dir(dplit)`` lists these and nothing else; the modules are imported as ``dplit.<module>``
# (``from dplit.mcmc import dp_mcmc``), and names that are also module names (``release``, ``mcmc``) stay in their
# modules: ``dplit.release.release``.
_ENTRY_POINTS = {
    # compositional data: the curator's release, then the analyst's methods
    "Release": "release_record", "check_compositions": "dirichlet", "dirichlet_mle": "dirichlet_fit",
    "boots": "bootstrap", "dp_boots": "bootstrap", "two_sample_test": "bootstrap",
    "make_prior": "priors", "GammaPrior": "priors",
    "dp_mcmc": "mcmc", "dp_remcmc": "mcmc", "p5_prior": "mcmc", "dp_abc": "abc", "dp_approx": "approx",
    # the core: mechanisms and budgets
    "laplace_mechanism": "mechanisms", "geometric_mechanism": "mechanisms", "PrivacyBudget": "accounting",
    # data augmentation (dapper)
    "PrivacyModel": "augmentation", "dapper_sample": "augmentation",
    # latent classes
    "release_margins": "latent_class", "fit_latent_class": "latent_class",
    "select_margins": "margin_selection", "select_and_release": "margin_selection",
    "release_summaries": "nested", "fit_nested": "nested", "synthesize_households": "nested",
    "NestedParams": "nested_model",
    # every method on one release; results
    "fit": "methods", "compare": "methods", "REGISTRY": "methods",
    "to_netcdf": "results", "from_netcdf": "results", "summary": "results", "attrs_of": "results",
}
_MODULES = tuple(m for layer in LAYERS for m in layer if m != "__main__")


def __getattr__(name):
    import importlib

    if name in _ENTRY_POINTS:
        value = getattr(importlib.import_module(f"dplit.{_ENTRY_POINTS[name]}"), name)
        globals()[name] = value
        return value
    if name in _MODULES:
        return importlib.import_module(f"dplit.{name}")
    raise AttributeError(f"module 'dplit' has no attribute {name!r}")


def __dir__():
    return sorted({"__version__", "PARTS", "LAYERS", *_ENTRY_POINTS})
