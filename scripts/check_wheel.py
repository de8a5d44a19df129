"""Build dplit's wheel, install it in a fresh virtual environment outside the checkout, use it there.

`make check-wheel` (run by .ci/run) calls ``python scripts/check_wheel.py [--python PYTHON]``. In a new
temporary folder, with no source tree in sight and no ``../shared`` beside it, it runs what a user
runs after ``pip install dplit``:

1. the README's library example (prints the summary with the release's component names);
2. ``dplit --help`` and ``python -m dplit analyse --help``;
3. ``dplit release`` on ``examples/minutes.csv`` (copied there) then ``dplit analyse`` of that release,
   and the written netCDF file read back with ``dplit.results.from_netcdf``;
4. a user's CSV with exact zeros (15% of days without work): ``dplit release``, ``dplit show`` and
   ``dplit analyse`` must each print the release's warning about exact zeros, naming work.

The installed versions of the main dependencies are printed. Exit status 1 at the first failure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, cwd, env, what):
    """Run ``cmd`` in ``cwd``; print its tail and stop on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    print(f"check-wheel: {what}: exit {proc.returncode} ({time.perf_counter() - t0:.0f} s)", flush=True)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        sys.exit(1)
    return proc.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the Python that creates the venv")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="dplit-wheel-"))
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DPLIT_DATA")}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(ROOT)], work,
             env, "build the wheel")
        wheel = next((work / "dist").glob("dplit-*.whl"))
        _run([args.python, "-m", "venv", str(work / "venv")], work, env, f"a fresh venv ({args.python})")
        bin_ = work / "venv" / "bin"
        env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
        _run([str(bin_ / "python"), "-m", "pip", "install", "-q", str(wheel)], work, env, f"pip install {wheel.name}")
        print(_run([str(bin_ / "python"), "-c",
                    "import sys, importlib.metadata as m; print('check-wheel: Python', sys.version.split()[0], '|', "
                    "', '.join(f'{p} {m.version(p)}' for p in ('numpy', 'scipy', 'numba', 'arviz', 'xarray')))"],
                   work, env, "versions").strip())
        run_dir = work / "user"
        run_dir.mkdir()
        located = _run([str(bin_ / "python"), "-c", "import dplit; print(dplit.__file__)"], run_dir, env, "import")
        if Path(located.strip()).resolve().is_relative_to(ROOT):
            sys.exit(f"check-wheel: dplit was imported from the checkout ({located.strip()}), not the wheel")
        code = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
        out = _run([str(bin_ / "python"), "-c", code], run_dir, env, "the README's library example")
        if "mean_composition[sleep]" not in out:
            sys.exit("check-wheel: the README example's summary lacks the component names:\n" + out)
        _run([str(bin_ / "dplit"), "--help"], run_dir, env, "dplit --help")
        _run([str(bin_ / "python"), "-m", "dplit", "analyse", "--help"], run_dir, env, "python -m dplit analyse --help")
        shutil.copy(ROOT / "examples" / "minutes.csv", run_dir / "minutes.csv")
        _run([str(bin_ / "dplit"), "release", "minutes.csv", "--close", "--eps1", "0.75", "--eps2", "0.25",
              "--out", "release.json"], run_dir, env, "dplit release")
        _run([str(bin_ / "dplit"), "analyse", "release.json", "--method", "dpmcmc", "--seed", "1",
              "--out", "posterior.nc"], run_dir, env, "dplit analyse")
        _run([str(bin_ / "python"), "-c", "from dplit.results import from_netcdf; import arviz as az; "
              "r = from_netcdf('posterior.nc'); print(az.summary(r, var_names=['alpha']))"], run_dir, env,
             "read the result back")
        # A user's data with exact zeros (15% of days without work): the curator is warned, and so is the analyst.
        rng = np.random.default_rng(3)
        X = rng.dirichlet([4.5, 2.0, 2.5, 1.0], size=2000)
        X[rng.random(2000) < 0.15, 1] = 0.0
        X /= X.sum(axis=1, keepdims=True)
        np.savetxt(run_dir / "days.csv", X, delimiter=",", fmt="%.10f", header="sleep,work,leisure,other",
                   comments="")
        told = {"dplit release": _run([str(bin_ / "dplit"), "release", "days.csv", "--eps1", "1", "--eps2", "0.5",
                                       "--out", "days.json"], run_dir, env, "dplit release (data with zeros)"),
                "dplit show": _run([str(bin_ / "dplit"), "show", "days.json"], run_dir, env, "dplit show"),
                "dplit analyse": _run([str(bin_ / "dplit"), "analyse", "days.json", "--method", "dpboots", "--seed",
                                       "1", "--out", "days.nc"], run_dir, env, "dplit analyse (data with zeros)")}
        for command, out in told.items():
            if "exact zeros" not in out or "work" not in out:
                sys.exit(f"check-wheel: {command} did not pass on the warning about exact zeros:\n{out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("check-wheel: the wheel works outside the checkout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
