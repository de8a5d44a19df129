"""Bit-identity check for refactors of the samplers: record, then compare, the draws of fixed-seed runs.

    .venv/bin/python benchmarks/check_bit_identity.py save /tmp/draws.npz      # on the old tree
    .venv/bin/python benchmarks/check_bit_identity.py compare /tmp/draws.npz   # on the new tree

Eleven runs: MCMC_p1; DPMCMC p1 (unsplit, split), p3, p4, p5, a Prior object; DPreMCMC ju and model5; and the
record acceptance and slice evaluations of one run. Used for issue 12 (sampler core): "DIFFER: []".
"""
import sys

import numpy as np

from dplit import mcmc as M
from dplit.dirichlet import dirichlet_draws, sufficient_stat
from dplit.priors import GammaPrior
from dplit.release import release

X = dirichlet_draws(np.array([2.0, 3.0, 4.0]), 300, rng=5)
r_un = release(X, eps1=1.0, eps2=0.5, candidates=[1e-3, 1e-2], tc=0.01, rng=6, secure=False)
r_sp = release(X, eps1=1.0, eps2=0.5, candidates=[1e-3, 1e-2], tc=0.01, n1=75, rng=7, secure=False)
kw = dict(n_iter=400, n_warmup=200, n_chains=2, thin=2, progress=False)
out = {}
out["mcmc_p1"] = M.mcmc(sufficient_stat(X), 300, rng=1, **kw).posterior["alpha"].values
out["dp_p1"] = M.dp_mcmc(r_un, rng=2, **kw).posterior["alpha"].values
out["dp_p1_split"] = M.dp_mcmc(r_sp, rng=3, **kw).posterior["alpha"].values
out["dp_p3"] = M.dp_mcmc(r_sp, prior="p3", rng=4, **kw).posterior["alpha"].values
out["dp_p4"] = M.dp_mcmc(r_sp, prior="p4", rng=5, **kw).posterior["alpha"].values
out["dp_p5"] = M.dp_mcmc(r_sp, prior="p5", rng=6, **kw).posterior["alpha"].values
out["dp_gamma_obj"] = M.dp_mcmc(r_un, prior=GammaPrior(2.0, 0.5, d=3, name="g"), rng=7, **kw).posterior["alpha"].values
out["re_ju"] = M.dp_remcmc(r_un, b=30, rng=8, **kw).posterior["alpha"].values
out["re_m5"] = M.dp_remcmc(r_sp, b=20, record_update="model5", rng=9, **kw).posterior["alpha"].values
acc = M.dp_mcmc(r_un, rng=2, **kw).sample_stats
out["dp_p1_acc"] = acc["record_acceptance"].values
out["dp_p1_evals"] = acc["slice_evaluations"].values
if sys.argv[1] == "save":
    np.savez(sys.argv[2], **out)
    print("saved", {k: v.shape for k, v in out.items()})
else:
    ref = np.load(sys.argv[2])
    bad = [k for k in ref.files if not np.array_equal(ref[k], out[k])]
    print("bit-identical:", [k for k in ref.files if k not in bad], "DIFFER:", bad)
