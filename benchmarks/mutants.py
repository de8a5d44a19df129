"""Plant moderate bugs in a copy of dplit and run the suite's checks against each (issue 32, "Done when").

Each mutant changes one line of a module the way a real mistake would: a noise scale 30% short, a budget charged
at half its cost, a Jacobian left out, a concentration 30% off. The copy is a fresh clone of the committed tree
(``git clone --shared``); the tests of the mutated module run against it (``PYTHONPATH`` puts the copy first). A
mutant is *caught* when the tests fail. The table goes to ``benchmarks/results/mutants.json`` with the command.

Usage::

    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/mutants.py [--only NAME,NAME] [--timeout S]

A run takes about half an hour on two cores (the tests of each mutated module, numba compiles included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "benchmarks", "results", "mutants.json")


@dataclass(frozen=True)
class Mutant:
    name: str
    module: str          # file under dplit/
    old: str | tuple     # exact text, found once (a tuple: several edits of the same file)
    new: str | tuple
    error: str           # the planted error, in words
    tests: tuple         # pytest arguments: the test files (and -k selections) that should catch it

    @property
    def edits(self):
        return tuple(zip(*((self.old, self.new) if isinstance(self.old, tuple) else ((self.old,), (self.new,)))))


MUTANTS = (
    Mutant("laplace_noise_x0.7", "mechanisms.py",
           "    return x + rng.laplace(0.0, scale, size=x.shape)",
           "    return x + rng.laplace(0.0, 0.7 * scale, size=x.shape)",
           "the Laplace mechanism adds noise of 0.7 x the scale its eps needs",
           ("tests/test_mechanisms.py", "tests/test_testing.py")),
    Mutant("geometric_noise_eps_x1.3", "mechanisms.py",
           "    t = math.exp(-eps / sensitivity)\n    rng = check.rng(rng)",
           "    t = math.exp(-1.3 * eps / sensitivity)\n    rng = check.rng(rng)",
           "the geometric mechanism's noise is that of 1.3 eps (30% overspent)",
           ("tests/test_mechanisms.py", "tests/test_release.py")),
    Mutant("release_sensitivity_x0.7", "release.py",
           "s_L = laplace_mechanism(logs.mean(axis=0), censored_sensitivity(d, a, n), eps1, rng=rng, secure=secure)",
           "s_L = laplace_mechanism(logs.mean(axis=0), 0.7 * censored_sensitivity(d, a, n), eps1, rng=rng, "
           "secure=secure)",
           "the release's statistic gets noise for a sensitivity 0.7 x Theorem 1's (its Release claims the full scale)",
           ("tests/test_release.py",)),
    Mutant("mcmc_jacobian_dropped", "_mcmc_moves.py",
           "        jac += theta[j]\n    out = n * (math.lgamma(a0) - lg)",
           "        jac += 0.0\n    out = n * (math.lgamma(a0) - lg)",
           "step (i) of DPMCMC leaves out the Jacobian of theta = log(alpha)",
           ("tests/test_mcmc.py",)),
    Mutant("dirichlet_mechanism_r_x1.3", "dirichlet_mechanism.py",
           "    gam = rng.standard_gamma(r * counts + alpha)",
           "    gam = rng.standard_gamma(1.3 * r * counts + alpha)",
           "the Dirichlet mechanism draws with a concentration r 30% above the one its guarantee allows",
           ("tests/test_dirichlet_mechanism.py",)),
    Mutant("ledger_sequential_as_max", "accounting.py",
           "        \"\"\"Epsilon spent so far (sum of the charges).\"\"\"\n        return math.fsum(e.eps for e in self._entries)",
           "        \"\"\"Epsilon spent so far (sum of the charges).\"\"\"\n        return max((e.eps for e in self._entries), default=0.0)",
           "the ledger composes sequential charges by their max instead of their sum",
           ("tests/test_accounting.py",)),
    Mutant("latent_class_table_eps_x1.3", "latent_class.py",
           "noisy = [geometric_mechanism(c, sensitivity, eps / len(true), rng=gen, secure=secure) for c in true]",
           "noisy = [geometric_mechanism(c, sensitivity, 1.3 * eps / len(true), rng=gen, secure=secure) for c in true]",
           "release_margins spends 1.3 x its share of eps on each table (noise too small)",
           ("tests/test_latent_class.py", "tests/test_contract.py")),
    Mutant("latent_class_regeneration_weight_forgotten", "_latent_class_model.py",
           "        if math.log(rng.random()) < w * d:\n            Psi[h, :, :] = 0.0",
           "        if math.log(rng.random()) < d:\n            Psi[h, :, :] = 0.0",
           "S4 (a class redrawn from its prior) accepts on the untempered likelihood ratio (weight w forgotten)",
           ("tests/test_latent_class.py",)),
    Mutant("nested_eps_over_2.5", "nested.py",
           "counts = geometric_mechanism(counts, sensitivity, eps / 5, rng=V.rng(rng), secure=secure)",
           "counts = geometric_mechanism(counts, sensitivity, eps / 2.5, rng=V.rng(rng), secure=secure)",
           "release_summaries splits eps over 2.5 instead of the 5 summaries (2x overspent)",
           ("tests/test_nested.py",)),
    Mutant("bootstrap_interval_level", "bootstrap.py",
           "        q = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], axis=0)",
           "        q = np.quantile(x, [(1 - 0.8 * level) / 2, (1 + 0.8 * level) / 2], axis=0)",
           "DPBoots' intervals are built at 0.8 x the asked level (95% -> 76%)",
           ("tests/test_bootstrap.py",)),
    Mutant("dapper_privacy_ratio_x0.7", "_augmentation_engines.py",
           "        sn = st - st_f(dmat[i], sdp, i) + st_f(prop[i], sdp, i)\n        new = priv_f(sdp, sn)\n        a = new - cur",
           "        sn = st - st_f(dmat[i], sdp, i) + st_f(prop[i], sdp, i)\n        new = priv_f(sdp, sn)\n"
           "        a = 0.7 * (new - cur)",
           "dapper's numba record update accepts with the privacy log ratio tempered by 0.7",
           ("tests/test_augmentation.py",)),
    Mutant("censoring_bias_dropped", "censoring.py",
           "    mean = mean0 + bias\n",
           "    mean = mean0 + 0.0 * bias\n",
           "the censored statistic's mean leaves out the censoring term",
           ("tests/test_censoring.py",)),
    # the samplers: each believes a Laplace scale 0.7 x the one the data were released with
    Mutant("samplers_scale_x0.7", "_release_model.py",
           "        out.append((np.asarray(s_L, dtype=float), n_part, m, scale))",
           "        out.append((np.asarray(s_L, dtype=float), n_part, m, 0.7 * scale))",
           "DPMCMC, DPreMCMC and DPapprox read the release's Laplace scale as 0.7 x its value",
           ("tests/test_sbc_power.py", "-k", "dp_mcmc or dp_approx")),
    Mutant("dp_approx_scale_x0.7", "approx.py",
           "    b = np.array([blk[3] for blk in blocks], dtype=float)",
           "    b = 0.7 * np.array([blk[3] for blk in blocks], dtype=float)",
           "DPapprox's scale mixture uses 0.7 x the release's Laplace scale",
           ("tests/test_approx.py", "tests/test_sbc_power.py", "-k", "approx")),
    Mutant("abc_simulator_scale_x0.7", "abc.py",
           "out[r, p * d + j] = s[j] + scales[p] * (rng.standard_exponential() - rng.standard_exponential())",
           "out[r, p * d + j] = s[j] + 0.7 * scales[p] * (rng.standard_exponential() - rng.standard_exponential())",
           "DPABC simulates releases with 0.7 x the Laplace scale",
           ("tests/test_abc.py", "tests/test_sbc_power.py", "-k", "abc")),
    Mutant("dapper_both_engines_ratio_x0.7", "_augmentation_engines.py",
           ("        sn = st - st_f(dmat[i], sdp, i) + st_f(prop[i], sdp, i)\n        new = priv_f(sdp, sn)\n        a = new - cur",
            "        new = float(priv_f(sdp, sn))\n        a = new - cur"),
           ("        sn = st - st_f(dmat[i], sdp, i) + st_f(prop[i], sdp, i)\n        new = priv_f(sdp, sn)\n"
            "        a = 0.7 * (new - cur)",
            "        new = float(priv_f(sdp, sn))\n        a = 0.7 * (new - cur)"),
           "both dapper engines accept records with the privacy log ratio tempered by 0.7",
           ("tests/test_sbc_power.py", "-k", "dapper", "tests/test_augmentation.py")),
)


def run_mutant(m, clone, timeout):
    path = os.path.join(clone, "dplit", m.module)
    with open(path) as fh:
        text = fh.read()
    mutated = text
    for old, new in m.edits:
        if mutated.count(old) != 1:
            return {"status": "pattern not found once", "count": mutated.count(old)}
        mutated = mutated.replace(old, new)
    with open(path, "w") as fh:
        fh.write(mutated)
    env = dict(os.environ, PYTHONPATH=clone, DPLIT_QUICK="1", MPLBACKEND="Agg")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *m.tests], cwd=clone, env=env, capture_output=True, text=True, timeout=timeout)
        # pytest's exit codes: 0 all passed, 1 a test failed; anything else (collection error, usage) is no verdict
        status = {0: "missed", 1: "caught"}.get(proc.returncode, f"error (pytest exit {proc.returncode})")
        tail = proc.stdout.strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        status, tail = "timeout", []
    finally:
        with open(path, "w") as fh:
            fh.write(text)
    failed = [ln.split(" ")[1] for ln in tail if ln.startswith("FAILED")]
    return {"status": status, "seconds": round(time.perf_counter() - t0, 1), "first_failure": failed[:1],
            "summary": tail[-1:] if tail else []}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated mutant names")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per mutant")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        clone = os.path.join(tmp, "dplit-copy")
        subprocess.run(["git", "clone", "-q", "--shared", ROOT, clone], check=True)
        probe = subprocess.run([sys.executable, "-c", "import dplit; print(dplit.__file__)"], cwd=tmp,
                               env=dict(os.environ, PYTHONPATH=clone), capture_output=True, text=True, check=True)
        if not probe.stdout.strip().startswith(clone):
            raise SystemExit(f"the copy is not the dplit imported: {probe.stdout.strip()}")
        for m in chosen:
            res = run_mutant(m, clone, args.timeout)
            print(f"{m.name:32s} {res['status']:8s} {res.get('seconds', '')} {res.get('first_failure', '')}",
                  flush=True)
            rows.append({"mutant": m.name, "module": f"dplit/{m.module}", "planted_error": m.error,
                         "tests": list(m.tests), **res})
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                                text=True).stdout.strip()
    for r in rows:
        r["commit"] = commit
    if args.only and os.path.exists(OUT):    # a partial run replaces its mutants' rows in the stored table
        with open(OUT) as fh:
            old = json.load(fh)
        new = {r["mutant"]: r for r in rows}
        kept = [dict(r, commit=r.get("commit", old["commit"])) for r in old["mutants"] if r["mutant"] not in new]
        rows = kept + [new[m.name] for m in chosen]
    out = {"command": "NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/mutants.py (a row's commit: the run that "
           "made it, --only NAME replacing that row)", "commit": commit, "size": "DPLIT_QUICK=1 (the CI's sizes)",
           "caught": sum(r["status"] == "caught" for r in rows), "of": len(rows), "mutants": rows}
    with open(OUT, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    return 0 if all(r["status"] == "caught" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
