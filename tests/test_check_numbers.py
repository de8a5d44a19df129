"""The stale-number check (docs/check_numbers.py, issue 29 item 3): the committed notebooks pass it, and a number
planted in a notebook's prose is caught, while a paper's number, an allowed number and an input are not."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
try:
    import check_numbers as cn
finally:
    sys.path.pop(0)


def _nb(markdown, output, code="x = 1\n"):
    """A notebook of one code cell (source ``code``, printing ``output``) and Markdown cells after it."""
    cells = [{"cell_type": "code", "execution_count": 1, "metadata": {}, "source": code,
              "outputs": [{"output_type": "stream", "name": "stdout", "text": output}]}]
    cells += [{"cell_type": "markdown", "metadata": {}, "source": md} for md in markdown]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _write(tmp_path, name, nb):
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _allow(tmp_path, text=""):
    path = tmp_path / "allow.toml"
    path.write_text(text)
    return path


def test_committed_notebooks_pass():
    """Every notebook: no stale number outside the pending notebooks, no unused allow entry."""
    config = cn.load_allow()
    paths = cn.notebooks()
    assert len(paths) >= 15
    for path in paths:
        findings, unused = cn.check_notebook(path, config["allow"])
        assert unused == []
        if cn.pending_reason(path.stem, config["pending"]) is None:
            assert findings == [], "\n".join(map(str, findings))
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "check_numbers.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 stale numbers" in proc.stdout


def _quoted_numbers(path):
    """(cell, number) of prose numbers with >= 3 significant digits that match an output of the notebook."""
    nb = cn.Notebook(path)
    return [(i, n) for i, n, _s, attributed, _label in nb.markdown_numbers()
            if not attributed and n.sig >= 3 and not n.percent and "e" not in n.text
            and any(n.matches(v) for v in nb.output_values)]


@pytest.mark.parametrize("name", ["63_atus", "52_margin_selection", "03_accounting"])
def test_planted_stale_number_in_a_real_notebook_is_reported(tmp_path, name):
    """Change the last digit of a number the prose quotes from an output: the check names notebook, cell, number."""
    src = ROOT / "notebooks" / f"{name}.ipynb"
    if not src.exists():
        pytest.skip(f"{name} was renamed or split")
    quoted = _quoted_numbers(src)
    if not quoted:
        pytest.skip(f"{name} quotes no number of >= 3 significant digits from its outputs")
    nb = json.loads(src.read_text())
    nb_outputs = cn.Notebook(src)
    planted = None
    for cell, number in quoted:
        last = int(number.text[-1])
        for d in (1, 2, 3, 4, 5, 6, 7, 8):
            candidate = number.text[:-1] + str((last + d) % 10)
            changed = cn.numbers_in(candidate)[0]
            if not any(changed.matches(v) for v in nb_outputs.output_values + nb_outputs.code_values):
                planted = (cell, number.text, candidate)
                break
        if planted:
            break
    assert planted, f"no digit change of a quoted number of {name} is absent from its outputs"
    cell, old, new = planted
    source = "".join(nb["cells"][cell]["source"])
    assert old in source
    nb["cells"][cell]["source"] = source.replace(old, new, 1)
    path = _write(tmp_path, name, nb)
    findings, _ = cn.check_notebook(path, [])
    hits = [f for f in findings if f.number == new]
    assert hits and hits[0].cell == cell and hits[0].notebook == name and new in hits[0].sentence
    # and the untouched copy has nothing at that place
    findings0, _ = cn.check_notebook(src, [])
    assert not [f for f in findings0 if f.cell == cell]


def test_the_issue_example_scale(tmp_path):
    """Prose "a Laplace scale of 0.035" under an output printing "Laplace scale ... 0.01382" (issue 29)."""
    out = "release: a = 0.01, Laplace scale 0.01382\n"
    stale = _nb(["The release above uses the Laplace scale 0.035 at this threshold."], out)
    fresh = _nb(["The release above uses the Laplace scale 0.014 at this threshold."], out)
    many = _nb(["The release above uses the Laplace scale 0.01383 at this threshold."], out)
    for nb, expect in ((stale, ["0.035"]), (fresh, []), (many, ["0.01383"])):
        findings, _ = cn.check_notebook(_write(tmp_path, "07_x", nb), [])
        assert [f.number for f in findings] == expect


def test_precision_percent_and_scientific(tmp_path):
    out = "coverage 0.9342; tail 1.382e-02; n = 7125; ratio 2.71828\n"
    ok = _nb(["Coverage is 93.4% here, the tail $1.38 \\times 10^{-2}$, the count 7,125, the ratio 2.718."], out)
    assert cn.check_notebook(_write(tmp_path, "a", ok), [])[0] == []
    bad = _nb(["Coverage is 93.9% here, the tail $1.48 \\times 10^{-2}$, the count 7,152, the ratio 2.731."], out)
    assert [f.number for f in cn.check_notebook(_write(tmp_path, "b", bad), [])[0]] == [
        "93.9%", "1.48e-2", "7,152", "2.731"]


def test_what_is_not_checked(tmp_path):
    """References, years, dates, versions, code spans, LaTeX tags, inputs, and numbers attributed to a paper."""
    md = ["See Sec. 5.1.2, eq. (4.21), Table 123, Figures 101-102 and notebook 117; ATUS 2019, run on 2026-11-25 "
          "with NumPy 2.1.3.",
          "Run `dplit study run --reps 137` or `f(x, 0.01382)`; $$x = y \\tag{4.71}$$",
          "The threshold a = 0.000123 was chosen in the code.",
          "The paper reports 0.0507 for women; Guo et al. give 7,181.",
          "Its 2004 wave <!-- paper --> has 15,636 people.",
          "Our fit gives 0.0522, the paper 0.0507."]
    nb = _nb(md, "mean 0.0522\n", code="a = 0.000123\n")
    findings, _ = cn.check_notebook(_write(tmp_path, "c", nb), [])
    assert findings == []
    # the run's own number after a paper's is still checked
    nb2 = _nb(["The paper's value, 0.173, is larger than ours (0.0361)."], "mean 0.036\n")
    assert [f.number for f in cn.check_notebook(_write(tmp_path, "d", nb2), [])[0]] == ["0.0361"]


def test_allow_list_and_pending(tmp_path):
    nb = _nb(["Here $k = 25.3$ scales."], "nothing printed\n")
    path = _write(tmp_path, "01_x", nb)
    assert [f.number for f in cn.check_notebook(path, [])[0]] == ["25.3"]
    allow = _allow(tmp_path, '[[allow]]\nnotebook = "01_x"\nnumber = "25.3"\nreason = "k = log(D / p), exact"\n')
    config = cn.load_allow(allow)
    assert cn.check_notebook(path, config["allow"]) == ([], [])
    assert cn.run([path], allow, out=open("/dev/null", "w")) == 0
    # an entry that matches nothing is a problem (the list cannot rot)
    (tmp_path / "other").mkdir()
    other = _write(tmp_path / "other", "01_x", _nb(["Here $k = 21.8$ scales."], "k 21.8\n"))
    assert cn.check_notebook(other, config["allow"])[1]
    assert cn.run([other], allow, out=open("/dev/null", "w")) == 1
    # an entry needs a reason
    with pytest.raises(ValueError, match="reason"):
        cn.load_allow(_allow(tmp_path, '[[allow]]\nnotebook = "01_x"\nnumber = "25.3"\nreason = " "\n'))
    # pending notebooks are reported, fail only with strict
    pend = _allow(tmp_path, '[[pending]]\nprefix = "01"\nreason = "being rewritten"\n')
    assert cn.run([path], pend, out=open("/dev/null", "w")) == 0
    assert cn.run([path], pend, strict=True, out=open("/dev/null", "w")) == 1


def test_command_line_exit_status(tmp_path):
    path = _write(tmp_path, "05_x", _nb(["The mean is 0.4153 here."], "mean 0.4125\n"))
    empty = _allow(tmp_path)
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "check_numbers.py"), "--allow", str(empty), str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "05_x: cell 1: 0.4153" in proc.stdout and "The mean is 0.4153 here." in proc.stdout
    fixed = _write(tmp_path, "05_y", _nb(["The mean is 0.4125 here."], "mean 0.4125\n"))
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "check_numbers.py"), "--allow", str(empty), str(fixed)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
