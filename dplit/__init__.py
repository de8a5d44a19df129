# Hand-written module (not generated from a notebook).
"""dplit: differentially private statistical inference, taught as literate notebooks.

Most modules in this package are generated from the notebooks in ``notebooks/``
(see the header of each file); ``config``, ``results``, ``export`` and ``cli`` are
written by hand.
"""

__version__ = "0.1.0"
