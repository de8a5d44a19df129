# Hand-written module (not generated from a notebook).
"""dplit: differentially private statistical inference, taught as literate notebooks.

Most modules in this package are generated from the notebooks in ``notebooks/``
(see the header of each file); ``config``, ``results``, ``_validate``, ``testing``,
``export`` and ``cli`` are written by hand.

``LAYERS`` declares the module order once: a module may import only modules of a
lower layer (never one of its own layer or above), so there are no import cycles.
``tests/test_layering.py`` checks every module of the package against it.
"""

__version__ = "0.1.0"

LAYERS = (
    ("config", "export"),                   # hand-written, no dplit imports
    ("_validate", "results"),               # argument checks; the one ArviZ adapter
    ("mechanisms",),                        # 01: noise
    ("accounting",),                        # 01b: budgets, RDP, zCDP
    ("testing",),                           # statistical checks (SBC, goodness of fit, audits)
    ("dirichlet",),                         # 02: the model, numba special functions, draws
    ("censoring",),                         # 03
    ("release",),                           # 04: the curator's side
    ("bootstrap",),                         # 05
    ("priors",),                            # 06: p1-p4, each owns its kernel density
    ("sampling",),                          # 06b: the one multi-chain driver
    ("mcmc",),                              # 07: MCMC, DPMCMC, DPreMCMC, p5
    ("abc", "approx"),                      # 08-09
    ("study", "datasets", "atus"),          # 10-11
    ("dirichlet_mechanism",),               # 12
    ("augmentation",),                      # 13
    ("latent_class",),                      # 14
    ("cli",),                               # the command line: may use anything
)
