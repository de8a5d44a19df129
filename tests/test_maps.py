"""The reader's maps name every notebook: 00_index's table and the README's table list each notebook of
``notebooks/`` (and its folders) exactly once, with the module it exports (or none), and name no notebook that does not exist."""

import re
from pathlib import Path

import pytest

from dplit import export

ROOT = Path(__file__).resolve().parent.parent
# A row names its notebook as code, bare or as a link to it (00_index links each; its own row says "this page").
ROW = re.compile(r"^(?:# )?\| \[?`(\d\d_[a-z_]+)`(?:\]\([^)]*\))?(?: \(this page\))? \|([^|]*)\|", re.M)


def notebooks():
    """notebook name -> the module it exports ('' for none)."""
    out = {}
    for path in export.notebook_paths(ROOT):
        m = re.search(r"^#\| default_exp (\w+)", path.read_text(), re.M)
        where = export.target_folder(path)
        out[path.stem] = "" if not m else f"dplit.{m.group(1)}" if where == "dplit" else f"{where}/{m.group(1)}.py"
    return out


def table(text):
    rows = ROW.findall(text)
    return [name for name, _ in rows], {name: module for name, module in rows}


@pytest.mark.parametrize("where", ["notebooks/00_index.py", "README.md"])
def test_map_names_every_notebook_once_with_its_module(where):
    names, modules = table((ROOT / where).read_text())
    have = notebooks()
    assert sorted(names) == sorted(set(names)), f"{where}: a notebook is listed twice"
    assert set(names) == set(have), (f"{where}: missing {sorted(set(have) - set(names))}, "
                                     f"unknown {sorted(set(names) - set(have))}")
    for name, module in have.items():
        listed = modules[name]
        assert (f"`{module}`" in listed) if module else ("dplit." not in listed), (where, name, listed)


def test_00_index_links_every_notebook_but_itself():
    text = (ROOT / "notebooks" / "00_index.py").read_text()
    for path in export.notebook_paths(ROOT):
        if path.stem != "00_index":
            rel = path.relative_to(ROOT / "notebooks").with_suffix(".ipynb").as_posix()
            assert f"| [`{path.stem}`]({rel}) |" in text, path.stem


def test_a_missing_notebook_is_caught():
    names, _ = table((ROOT / "README.md").read_text())
    assert "73_mcmc_checks" in names
    text = "\n".join(ln for ln in (ROOT / "README.md").read_text().splitlines() if "`73_mcmc_checks`" not in ln)
    assert set(table(text)[0]) != set(notebooks())



def unlinked_in_readme(text):
    """Notebooks whose README row does not link its committed .ipynb (a path relative to the README)."""
    out = []
    for path in export.notebook_paths(ROOT):
        rel = path.relative_to(ROOT).with_suffix(".ipynb").as_posix()
        if f"| [`{path.stem}`]({rel}) |" not in text or not (ROOT / rel).exists():
            out.append(path.stem)
    return out


def test_readme_links_every_notebook_to_its_file():
    text = (ROOT / "README.md").read_text()
    assert unlinked_in_readme(text) == []
    planted = text.replace("[`21_mcmc`](notebooks/21_mcmc.ipynb)", "`21_mcmc`").replace(
        "(notebooks/papers/80_guo_simulation_study.ipynb)", "(notebooks/80_guo_simulation_study.ipynb)")
    assert unlinked_in_readme(planted) == ["21_mcmc", "80_guo_simulation_study"]


def test_the_index_counts_of_the_papers_items_match_their_rows():
    """Each paper's "Counts:" line in 00_index agrees with the statuses of the rows of its table."""
    import re
    from collections import Counter

    text = (ROOT / "notebooks" / "00_index.py").read_text()
    part = text.split("## Every table and figure of the papers", 1)[1].split("\n# ## ", 1)[0]
    papers = part.split("\n# ### ")[1:]
    assert len(papers) == 4
    names = {"reproduced": "reproduced", "reproduced in part": "reproduced in part",
             "differs (explained)": "differs, explained", "differs (cause open)": "differs, cause open",
             "not reproduced": "not reproduced",
             "not applicable": "not applicable"}
    for paper in papers:
        said = re.search(r"Counts: (\d+) items[^;]*; (.*)\.", paper)
        claimed = {names[m.group(1).strip()]: int(m.group(2)) for m in re.finditer(r"([a-z ()]+?) (\d+)(?:,|$)", said.group(2))}
        rows = [r for r in paper.splitlines() if r.startswith("# | ") and not r.startswith("# | item")]
        statuses = Counter()
        for r in rows:
            cell = r.rstrip(" |").rsplit(" | ", 1)[1]
            statuses[next(s for s in sorted(names.values(), key=len, reverse=True) if cell.startswith(s))] += 1
        assert sum(statuses.values()) == int(said.group(1)), paper[:60]
        assert dict(statuses) == claimed, (paper[:60], dict(statuses), claimed)
