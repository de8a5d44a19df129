"""The tests and notebooks a change touches, for the inner loop of a contributor (`make test-fast`).

A change is what `git` reports against a base (default ``HEAD``: the uncommitted edits, untracked
files included; ``--base main`` adds the commits of a branch). From it:

1. the dplit modules it changes: a module edited by hand, or the module a changed library notebook
   exports (its ``#| default_exp``);
2. every module that imports one of those, directly or through others (the import graph of
   ``dplit/``, the same one ``tests/test_layering.py`` checks), since a change can break a caller;
3. the test files and notebooks that import an affected module (``from dplit.mcmc import ...``,
   ``import dplit.mcmc``, or an entry point such as ``from dplit import dp_mcmc``), plus the changed
   test files and notebooks themselves, plus the checks of the literate layout when a notebook changed.

These run under pytest at quick size, in parallel. This is a shortcut, not the suite: `make test`
(what CI runs) remains the answer before a commit lands on main.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dplit import _ENTRY_POINTS, export  # noqa: E402

# Files whose checks are tests of their own: a change there selects these tests.
_ALSO = {
    "README.md": ["tests/test_readme.py", "tests/test_maps.py"],
    "docs/check_numbers.py": ["tests/test_check_numbers.py"],
    "docs/check_site.py": ["tests/test_check_docs.py"],
    "Makefile": ["tests/test_literate.py"],
    "pyproject.toml": ["tests/test_literate.py"],
}
_ENTRY_STRING = re.compile(r"^dplit\.(\w+):\w+$")
_DEFAULT_EXP = re.compile(r"^#\|\s*default_exp\s+(\w+)", re.M)


def dplit_imports(source: str) -> set[str]:
    """Names of the dplit modules a source imports, anywhere in it: import statements (an entry point such as
    ``from dplit import dp_mcmc`` counts as its module) and the ``"dplit.module:function"`` strings of the
    methods' registry, which are imported on first use."""
    found = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a notebook with IPython magics: fall back to the import lines
        return {m for line in source.splitlines() if re.match(r"\s*(from|import)\s+dplit", line)
                for m in dplit_imports(line.strip())}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ENTRY_STRING.match(node.value):
            found.add(_ENTRY_STRING.match(node.value).group(1))
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("dplit.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("dplit."):
                found.add(node.module.split(".")[1])
            elif node.module == "dplit":
                found |= {_ENTRY_POINTS.get(a.name, a.name) for a in node.names
                          if a.name not in ("PARTS", "LAYERS", "__version__")}
    return found


def changed_files(base: str) -> list[str]:
    """Paths (relative to the checkout) changed against ``base``, untracked files included."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    diff = git("diff", "--name-only", base) if base == "HEAD" else git("diff", "--name-only", f"{base}...HEAD")
    if base != "HEAD":
        diff += git("diff", "--name-only", "HEAD")
    return sorted(set(diff + git("ls-files", "--others", "--exclude-standard")))


def selection(changed: list[str]) -> tuple[list[str], set[str]]:
    """The test files and notebooks to run for ``changed``, and the affected modules."""
    graph = {p.stem: dplit_imports(p.read_text()) for p in (ROOT / "dplit").glob("*.py") if p.stem != "__init__"}
    notebooks = {str(p.relative_to(ROOT)): p for p in export.notebook_paths(ROOT)}
    modules, targets = set(), set()
    for path in changed:
        p = Path(path)
        stem = p.with_suffix("").as_posix()
        if p.parts[0] == "dplit" and p.suffix == ".py" and p.stem in graph:
            modules.add(p.stem)
        elif stem + ".py" in notebooks:
            found = _DEFAULT_EXP.search(notebooks[stem + ".py"].read_text())
            if found and p.parent.name == "notebooks":
                modules.add(found.group(1))
            targets |= {stem + ".ipynb", "tests/test_literate.py"}
        elif p.parts[0] == "tests" and p.suffix == ".py" and p.name.startswith("test_") and (ROOT / p).exists():
            targets.add(path)
        targets |= set(_ALSO.get(path, []))
    affected, frontier = set(modules), set(modules)
    while frontier:   # the callers of the changed modules, through any number of imports
        frontier = {m for m, imports in graph.items() if imports & frontier} - affected
        affected |= frontier
    if affected:
        targets.add("tests/test_layering.py")
        for test in (ROOT / "tests").glob("test_*.py"):
            if dplit_imports(test.read_text()) & affected:
                targets.add(str(test.relative_to(ROOT)))
        for rel, source in notebooks.items():
            if dplit_imports(source.read_text()) & affected:
                targets.add(rel[:-3] + ".ipynb")
    return sorted(t for t in targets if (ROOT / t).exists()), affected


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="compare against this commit (default HEAD: uncommitted "
                        "changes; 'main' adds the commits of the current branch)")
    parser.add_argument("--list", action="store_true", help="print the selection and stop")
    args = parser.parse_args(argv)
    changed = changed_files(args.base)
    targets, affected = selection(changed)
    print(f"test-fast: {len(changed)} changed file(s) against {args.base}; modules affected: "
          f"{', '.join(sorted(affected)) or 'none'}")
    print(f"test-fast: {len(targets)} test file(s) and notebook(s): {' '.join(targets) or '(none)'}")
    if args.list or not targets:
        return 0
    env = {**os.environ, "DPLIT_QUICK": "1"}
    checks = [[sys.executable, "-m", "dplit.export", "--check"]]
    python_files = [c for c in changed if c.endswith(".py") and (ROOT / c).exists()]
    if python_files:
        checks.append([sys.executable, "-m", "ruff", "check", *python_files])
    for command in checks:
        if subprocess.run(command, cwd=ROOT, env=env).returncode:
            return 1
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "auto", "--dist", "loadscope", "-q", *targets],
                          cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
