"""The module order of dplit.LAYERS: no module imports one of its own layer or above, no cycles; and the
notebooks' numbers follow it: no module imports the module of a higher-numbered notebook."""

import ast
import re
from pathlib import Path

import pytest

import dplit

# The one reading of the import graph, shared with `make test-fast`.
from scripts.fast_tests import dplit_imports

ROOT = Path(__file__).resolve().parents[1]


def layering_problems(graph: dict[str, set[str]], layers) -> list[str]:
    """Every edge of ``graph`` (module -> modules it imports) that breaks the declared ``layers``."""
    rank = {m: i for i, layer in enumerate(layers) for m in layer}
    problems = [f"{m} is not declared in dplit.LAYERS" for m in graph if m not in rank]
    for module, imports in sorted(graph.items()):
        for other in sorted(imports):
            if other not in rank:
                problems.append(f"{module} imports {other}, which is not declared in dplit.LAYERS")
            elif module in rank and rank[other] >= rank[module]:
                where = "its own layer" if rank[other] == rank[module] else "a higher layer"
                problems.append(f"{module} (layer {rank[module]}) imports {other} from {where} "
                                f"(layer {rank[other]})")
    return problems


def package_graph(folder: Path) -> dict[str, set[str]]:
    return {p.stem: dplit_imports(p.read_text()) for p in sorted(folder.glob("*.py"))
            if p.stem != "__init__"}


def test_every_module_respects_the_declared_layers():
    assert layering_problems(package_graph(ROOT / "dplit"), dplit.LAYERS) == []


def test_layers_name_each_module_once():
    names = [m for layer in dplit.LAYERS for m in layer]
    assert len(names) == len(set(names))


def test_an_inverted_import_is_caught():
    graph = {"mechanisms": set(), "dirichlet": {"mechanisms"}, "release": {"dirichlet"}}
    assert layering_problems(graph, dplit.LAYERS) == []
    graph["dirichlet"] = {"release"}          # a lower module reaching up
    problems = layering_problems(graph, dplit.LAYERS)
    rank = {m: i for i, layer in enumerate(dplit.LAYERS) for m in layer}
    assert problems == [f"dirichlet (layer {rank['dirichlet']}) imports release from a higher layer "
                        f"(layer {rank['release']})"]


def test_a_cycle_and_a_same_layer_import_are_caught():
    # priors <-> mcmc: whichever way round, one edge points upward
    problems = layering_problems({"priors": {"mcmc"}, "mcmc": {"priors"}}, dplit.LAYERS)
    assert any("priors" in p and "higher layer" in p for p in problems)
    problems = layering_problems({"abc": {"approx"}}, dplit.LAYERS)
    k = next(i for i, layer in enumerate(dplit.LAYERS) if "abc" in layer)
    assert problems == [f"abc (layer {k}) imports approx from its own layer (layer {k})"]


def test_an_undeclared_module_is_caught():
    assert layering_problems({"newthing": {"mechanisms"}}, dplit.LAYERS) == [
        "newthing is not declared in dplit.LAYERS"]


@pytest.mark.parametrize("source, expected", [
    ("from dplit.mcmc import dp_mcmc", {"mcmc"}),
    ("import dplit.release as R", {"release"}),
    ("from dplit import priors, sampling", {"priors", "sampling"}),
    ("def f():\n    from dplit.mcmc import p5_prior\n", {"mcmc"}),
    ("from . import x\nimport numpy", set()),
])
def test_imports_are_found_wherever_they_are(source, expected):
    assert dplit_imports(source) == expected


def private_imports(source: str, module: str) -> list[str]:
    """Private (``_``) names that ``module``'s source imports from another dplit module (``_validate`` is a
    module, imported whole; dunders such as ``__version__`` are not private names)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("dplit.") or node.module == "dplit":
                for a in node.names:
                    name = a.name
                    private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
                    if private and not (node.module == "dplit" and name == "_validate"):
                        found.append(f"{module} imports {name} from {node.module}")
    return found


def test_no_module_imports_another_modules_private_names():
    problems = [p for path in sorted((ROOT / "dplit").glob("*.py"))
                for p in private_imports(path.read_text(), path.stem)]
    assert problems == []


def test_a_private_import_is_caught():
    assert private_imports("from dplit.mcmc import _blocks, dp_mcmc", "approx") == [
        "approx imports _blocks from dplit.mcmc"]
    assert private_imports("from dplit import _validate as V, __version__", "cli") == []


def test_parts_group_the_layers_in_order():
    names = [name.split(" (")[0] for name, _ in dplit.PARTS]
    assert names == ["core", "compositional data", "the Dirichlet mechanism", "data augmentation", "latent classes",
                     "methods and studies", "interfaces"]
    assert dplit.LAYERS == tuple(layer for _, layers in dplit.PARTS for layer in layers)


def notebook_numbers(folder: Path) -> dict[str, int]:
    """module -> the number of the notebook it is generated from (hand-written modules have none)."""
    out = {}
    for path in sorted(folder.glob("*.py")):
        m = re.match(r"# AUTOGENERATED from notebooks/(\d\d)_\w+\.py", path.read_text())
        if m:
            out[path.stem] = int(m.group(1))
    return out


def number_problems(graph: dict[str, set[str]], numbers: dict[str, int]) -> list[str]:
    """Every edge from a generated module to the module of a notebook numbered as high or higher."""
    return [f"{module} (notebook {numbers[module]:02d}) imports {other} (notebook {numbers[other]:02d})"
            for module, imports in sorted(graph.items()) if module in numbers
            for other in sorted(imports) if other in numbers and numbers[other] >= numbers[module]]


def test_notebook_numbers_follow_the_imports():
    numbers = notebook_numbers(ROOT / "dplit")
    assert len(numbers) >= 30 and numbers["mechanisms"] < numbers["mcmc"]
    assert number_problems(package_graph(ROOT / "dplit"), numbers) == []


def test_a_number_inversion_is_caught():
    numbers = notebook_numbers(ROOT / "dplit")
    graph = {"bootstrap": {"release"}, "release": set()}
    assert number_problems(graph, numbers) == []
    graph["release"] = {"bootstrap"}          # notebook 15's module reaching up to notebook 17's
    assert number_problems(graph, numbers) == [
        f"release (notebook {numbers['release']:02d}) imports bootstrap (notebook {numbers['bootstrap']:02d})"]


def test_the_parts_follow_the_notebook_numbers():
    """The tens digit of a module's notebook names its part: 0x core, 1x-2x compositional data, 3x the Dirichlet
    mechanism, 4x dapper, 5x latent classes, 6x methods and studies."""
    part = {m: i for i, (_, layers) in enumerate(dplit.PARTS) for layer in layers for m in layer}
    tens = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4, 6: 5}
    for module, number in notebook_numbers(ROOT / "dplit").items():
        assert part[module] == tens[number // 10], (module, number)
