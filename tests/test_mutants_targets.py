"""The planted bugs of ``benchmarks/mutants.py`` still find their target: each edit's text occurs exactly once in
its module, and the tests it names exist. A refactor that moves the code (a notebook split) must move the mutant
with it, or the power check of the suite would silently measure nothing."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("dplit_bench_mutants", ROOT / "benchmarks" / "mutants.py")
mutants = importlib.util.module_from_spec(spec)
sys.modules.setdefault("dplit_bench_mutants", mutants)   # dataclasses look their module up
spec.loader.exec_module(mutants)


@pytest.mark.parametrize("m", mutants.MUTANTS, ids=lambda m: m.name)
def test_mutant_finds_its_text_once(m):
    text = (ROOT / "dplit" / m.module).read_text()
    for old, new in m.edits:
        assert text.count(old) == 1, f"{m.name}: its text occurs {text.count(old)} times in dplit/{m.module}"
        assert old != new
    for arg in m.tests:
        if arg.startswith("tests/"):
            assert (ROOT / arg).is_file(), f"{m.name}: {arg} does not exist"


def test_a_moved_text_is_caught():
    m = mutants.MUTANTS[0]
    moved = mutants.Mutant(m.name, "results.py", m.old, m.new, m.error, m.tests)
    text = (ROOT / "dplit" / moved.module).read_text()
    assert any(text.count(old) != 1 for old, _ in moved.edits)
