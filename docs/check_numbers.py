"""No number in a notebook's prose that its cells compute, with a different value (issue 29, item 3).

Usage::

    python docs/check_numbers.py                      # every notebooks/NN_topic.ipynb
    python docs/check_numbers.py notebooks/17_bootstrap.ipynb ...
    python docs/check_numbers.py --strict              # pending notebooks fail too

Exit status 1 when a Markdown cell quotes a stale number, 0 otherwise. Each finding names the notebook, the
cell index (0-based, as in the ``.ipynb``), the number and its sentence.

**The convention.** A number that comes from a run enters the prose through the run: a code cell prints it or,
when it belongs in a sentence, writes the sentence itself from the computed values::

    from IPython.display import Markdown
    Markdown(f"The converged fraction of DPMCMC$_{{p1}}$ at $\\epsilon = 0.5$ is {frac:.2f}.")

Generated Markdown is an output, so it can never disagree with the run, and it renders the same in plain Jupyter
(what readers use), JupyterLab and the site (``docs/prepare.py`` copies the stored outputs; myst-nb runs nothing).
myst-nb's ``glue`` is not used: its ``{glue:}`` roles show as raw text in Jupyter and it would make ``myst_nb`` a
dependency of the notebooks. Hand-written prose states what the reader can see without a number ("above 1",
"at the nominal level"), numbers that are inputs (they appear in the code), or numbers from a paper.

**What is checked.** The numbers of each Markdown cell are compared with every number in the notebook's stored
outputs (stream text, ``text/plain``, ``text/markdown``, ``text/html``) and in its code (inputs the reader set). A
prose number *looks like a run result*, and is checked, when it is

* a decimal (``0.035``, ``2.731``, ``12.5%``, ``1.38 x 10^{-2}``), or
* an integer with at least three significant digits (``1,063``, ``7125``; not ``5000`` or ``20``).

It must equal some output or code number at the prose's precision (half a unit in its last digit; a percentage
may match a fraction and vice versa; signs are ignored), otherwise it is reported, with the values printed after
its label when there are any ("scale 0.035 ... 'scale' is printed with 0.01382"). Matching a label's own values
instead (a stricter rule) was measured on the notebooks of 2026-11-25 and rejected: 51 of the 83 labelled decimals
did not match the values printed after the word before them, nearly all inputs and comparisons, not stale numbers.
With the rule above, the one false alarm seen that day was a section number written without "Sec." ("as predicted
in 7.1"); the other numbers it reported were stale, timings of other runs, or derived in the text.

**Power** (measured the same day by changing each checked prose number that matches an output, by a factor 0.4,
0.7, 1.3 or 2.5, and asking whether the check reports it): 144 of 180 changes (80%) of numbers with three or more
significant digits are reported, but only 150 of 943 (16%) of one- and two-digit decimals, because a notebook's
outputs hold so many numbers that a two-digit decimal nearly always rounds from one of them (restricting the match
to the outputs of the same section raised this to 23% at the price of 42 false alarms, so it is not done). Short
numbers are therefore protected by the convention above, not by this check: write them from the run.

**Not checked**, so they never raise a false alarm: fenced code and code spans (commands and argument values),
LaTeX labels and tags, link targets, references ("Sec. 5.1", "eq. (5)", "Table 2", "Fig. 1-2", "Alg. 1",
"notebook 21", ...), dates, years, version numbers, and numbers attributed to a paper. A number is attributed
to a paper when its sentence names one ("the paper", "Guo et al.", "Nixon et al.", "dapper's", "published") before it, with no
"ours", "we", "here", "above" in between, or when an HTML comment ``<!-- paper -->`` (invisible in every renderer)
comes before it in the same way.
Anything else that is not a run result (an exact value derived in the text, a unit conversion) is listed with its
reason in ``docs/check_numbers_allow.toml`` (``[[allow]]``: notebook, number, reason); an entry that no longer
matches a number of its notebook is itself a problem, so the list cannot rot.

``pending`` in the same file lists notebook-name prefixes whose prose is still being rewritten: their findings are
printed but do not fail the check (``--strict`` makes them fail). The list is meant to become empty.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOW_FILE = ROOT / "docs" / "check_numbers_allow.toml"

# A number as written in prose or output: optional thousands separators, optional decimals, optional exponent.
_NUM = re.compile(r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
                  r"(?P<exp>[eE][-+−]?\d+)?(?![\w])")
# "1.38 x 10^{-2}", "1.38 \times 10^{-2}", "1.38 × 10^-2" (the mantissa is captured by _NUM, the power here).
_TIMES_TEN = re.compile(r"\s*(?:x|×|\\times|\\cdot|·)\s*10\s*\^\s*\{?\s*(?P<pow>[-+−]?\d+)\s*\}?")
_SCI = re.compile(r"(?<![\w.])(?P<m>\d+(?:\.\d+)?)" + _TIMES_TEN.pattern)
_PERCENT = re.compile(r"\s*(?:\\?%|percent)")
# References to parts of a paper or of the project: the word, then numbers joined by , - – and "and".
_REF_WORDS = (r"Sec|Secs|Section|Sections|section|sections|table|tables|figure|figures|§|eq|eqs|Eq|Eqs|equation|equations|Equation|Table|Tables|Tab|Fig|Figs|Figure|"
              r"Figures|Alg|Algorithm|Algorithms|Thm|Theorem|Theorems|Prop|Proposition|Lemma|Lemmas|Remark|Remarks|"
              r"Example|Examples|Ex|App|Appendix|Supp|Supplement|Step|Steps|step|steps|notebook|notebooks|Notebook|"
              r"Notebooks|issue|issues|item|items|Def|Definition|Cor|Corollary|Chapter|Chapters|Ch|line|lines|cell|"
              r"cells|version|versions|Python|ArviZ|NumPy|SciPy|numba|page|pages|p|pp|Part|Case|Cases|case|cases|"
              r"Assumption|Condition|Conditions|Model|Models|Scenario|Scenarios|Setting|Settings|Experiment|"
              r"Experiments|Exercise|Appendices|S|Stage|stage|Phase|Level|Rule|rule|Property|Properties|Claim")
_REF = re.compile(rf"\b(?:{_REF_WORDS})\.?\s*~?\(?[A-Z]?\d+(?:\.\d+)*[a-z]?\)?"
                  r"(?:\s*(?:,|-|–|—|and|or|to|&)\s*\(?[A-Z]?\d+(?:\.\d+)*[a-z]?\)?)*")
_HEADING_NUMBER = re.compile(r"^#+\s*(?:\d+(?:\.\d+)*\.?)", re.M)   # "### 7.1 The score equations"
_PAREN_EQ = re.compile(r"\([1-9]\d?(?:\.[1-9]\d?)*[a-z]?\)")     # "(5)", "(4.2)", "(12b)": an equation number
_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b|\b\d{1,2}:\d{2}(?::\d{2})?\b")
_VERSION = re.compile(r"\b\d+\.\d+\.\d+(?:\.\d+)*\b|\bv\d+(?:\.\d+)*\b")
_CODE_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
_LATEX_LABEL = re.compile(r"\\(?:tag|label|ref|eqref|cite|hspace|vspace|kern|mkern|mathrm\{d\})\*?\{[^}]*\}|"
                          r"\\(?:quad|qquad|,|;|!)")
_LATEX_SIZE = re.compile(r"\\(?:frac|tfrac|dfrac)\s*\{?\s*1\s*\}?\s*\{?\s*2\s*\}?")  # \frac12 is not a "12"
_TAGS = re.compile(r"<[^>]+>")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z*$(\[`'\"])|\n\s*\n|\n\s*[*\-|] |\|")
_PAPER = re.compile(r"\b(?:the paper|paper's|papers|paper:|the article|the authors|Guo et al|Nixon et al|Eng et al|dapper's|"
                    r"published|as reported|report(?:s|ed)? in|in the paper|original study|Table \d+ of)\b|"
                    r"<!--\s*paper\s*-->", re.I)
# A cue that what follows is this notebook's own result again ("larger than ours (0.036 ...)").
_OURS = re.compile(r"\b(?:ours|our|we|here|this run|this notebook|above|below)\b", re.I)
_STOP = {"the", "a", "an", "of", "is", "are", "was", "be", "to", "at", "in", "on", "and", "or", "for", "by", "with",
         "about", "near", "than", "from", "as", "its", "it", "this", "that", "here", "there", "each", "every",
         "all", "only", "so", "which", "while", "where", "when", "then", "now", "not", "no", "but", "up", "down",
         "into", "under", "over", "below", "above", "between", "within", "per", "like", "same", "one", "two",
         "three", "equal", "equals", "approximately", "roughly", "around", "some", "most", "least", "more", "less",
         "has", "have", "had", "gives", "give", "gets", "get", "reaches", "stays", "set", "sets", "value", "values",
         "number", "numbers", "eps", "epsilon", "alpha", "delta", "lambda", "sigma", "n", "d", "k", "p", "x", "s",
         "mathbf", "boldsymbol", "hat", "le", "ge", "leq", "geq", "approx", "times", "sim", "mid", "text",
         "mathrm", "left", "right", "frac", "sqrt", "log", "exp", "mu", "rho", "tau", "theta", "psi", "phi", "pi"}


@dataclass(frozen=True)
class Number:
    """One number of a text: as written, its value, its precision (half a unit in its last digit)."""

    text: str
    value: float
    half_ulp: float
    sig: int
    percent: bool
    start: int
    decimal: bool = False

    def matches(self, other: float) -> bool:
        """True when ``other`` (an output or code number, sign ignored) rounds to this number."""
        tol = self.half_ulp * (1 + 1e-9) + 1e-12 * abs(self.value)
        return any(abs(abs(other) * f - abs(self.value)) <= tol for f in (1.0, 100.0, 0.01))


@dataclass(frozen=True)
class Finding:
    notebook: str
    cell: int
    number: str
    sentence: str
    why: str

    def __str__(self) -> str:
        return f"{self.notebook}: cell {self.cell}: {self.number} ({self.why}): {self.sentence}"


def _parse(match: re.Match, text: str) -> Number | None:
    """The number of a _NUM match, with a following "x 10^k" or "%"; None for a year, a date or a bare integer
    run together with letters."""
    raw = match.group("num")
    digits = raw.replace(",", "")
    mantissa = digits
    exp = match.group("exp")
    power = int(exp[1:].replace("−", "-")) if exp else 0
    end = match.end()
    times = _TIMES_TEN.match(text, end)
    if times and not exp:
        power = int(times.group("pow").replace("−", "-"))
        end = times.end()
    pct = _PERCENT.match(text, end)
    percent = bool(pct)
    if pct:
        end = pct.end()
    if "." in mantissa:
        whole, frac = mantissa.split(".")
        decimals = len(frac)
        sig_digits = (whole.lstrip("0") + frac) if whole.strip("0") else frac.lstrip("0")
        sig = len(sig_digits)
        half = 0.5 * 10.0 ** (-decimals + power)
    else:
        stripped = mantissa.lstrip("0") or "0"
        trailing = len(stripped) - len(stripped.rstrip("0")) if stripped != "0" else 0
        sig = max(len(stripped) - trailing, 1)
        half = 0.5 * 10.0 ** (trailing + power)
        if not exp and not times and not percent and 1900 <= int(mantissa) <= 2100 and "," not in raw:
            return None                                   # a year
    value = float(mantissa) * 10.0 ** power
    return Number(text=text[match.start():end].strip(), value=value, half_ulp=half, sig=sig, percent=percent,
                  start=match.start(), decimal="." in mantissa or power < 0)


def numbers_in(text: str) -> list[Number]:
    """Every number of a (cleaned) text."""
    out = []
    for m in _NUM.finditer(text):
        n = _parse(m, text)
        if n is not None:
            out.append(n)
    return out


def _blank(m: re.Match) -> str:
    """Replace a match by spaces (offsets, hence sentences, are kept)."""
    return " " * (m.end() - m.start())


def clean_markdown(source: str) -> str:
    """Markdown with everything that is not a checked number blanked: code, links, LaTeX labels, references,
    dates, versions. HTML comments ``<!-- paper -->`` are kept as a marker."""
    # LaTeX's thousands separator, 3{,}888 -> "3,888  " (offsets kept, so sentences are too)
    s = re.sub(r"(\d)\{,\}(\d{3})(?!\d)", lambda m: f"{m.group(1)},{m.group(2)}  ", source)
    s = _CODE_FENCE.sub(_blank, s)
    s = _CODE_SPAN.sub(_blank, s)
    s = _HTML_COMMENT.sub(lambda m: m.group(0) if re.fullmatch(r"\s*paper\s*", m.group(1)) else _blank(m), s)
    s = _LINK_TARGET.sub(_blank, s)
    s = _URL.sub(_blank, s)
    s = _LATEX_LABEL.sub(_blank, s)
    s = _LATEX_SIZE.sub(_blank, s)
    s = _REF.sub(_blank, s)
    s = _HEADING_NUMBER.sub(_blank, s)
    s = _PAREN_EQ.sub(_blank, s)
    s = _DATE.sub(_blank, s)
    s = _VERSION.sub(_blank, s)
    # "1.38 x 10^{-2}" -> "1.38e-2" (padded to the same length); the other sub- and superscripts are indices or
    # powers written in the text, not results: x_1, 10^{-5}
    s = _SCI.sub(lambda m: f"{m.group('m')}e{m.group('pow').replace('−', '-')}".ljust(m.end() - m.start()), s)
    s = re.sub(r"[_^]\{?\s*[-+−]?\d+\s*\}?", _blank, s)
    return s


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence (also table cells and list items) of a text."""
    bounds, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        bounds.append((start, m.start()))
        start = m.end()
    bounds.append((start, len(text)))
    return bounds


def _label(text: str, pos: int) -> str | None:
    """The word that labels the number at ``pos``: the last non-stop word among the three before it."""
    words = re.findall(r"[A-Za-z][A-Za-z\-]*", text[max(0, pos - 60):pos])
    for w in reversed(words[-3:]):
        if w.lower() not in _STOP and len(w) >= 4:
            return w.lower()
    return None


def _text_of(output: dict) -> str:
    """The text a reader sees in one output (images and widget views carry none)."""
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    data = output.get("data", {})
    parts = []
    for key in ("text/plain", "text/markdown", "text/latex"):
        if key in data:
            parts.append("".join(data[key]))
    if "text/html" in data:
        parts.append(_TAGS.sub(" ", "".join(data["text/html"])))
    return "\n".join(parts)


class Notebook:
    """One stored notebook: its Markdown cells, and the numbers of its outputs and code."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.name = self.path.stem
        nb = json.loads(self.path.read_text())
        self.cells = nb.get("cells", [])
        outputs, code = [], []
        for cell in self.cells:
            if cell.get("cell_type") != "code":
                continue
            code.append("".join(cell.get("source", "")))
            outputs.extend(_text_of(o) for o in cell.get("outputs", []))
        self.output_text = "\n".join(outputs).replace("−", "-")
        self.code_text = "\n".join(code)
        self.output_values = self._values(self.output_text)
        self.code_values = self._values(self.code_text)
        self.output_words = set(re.findall(r"[a-z][a-z\-]{3,}", self.output_text.lower()))

    @staticmethod
    def _values(text: str) -> list[float]:
        vals = []
        for m in _NUM.finditer(text):
            raw = m.group("num")
            try:
                vals.append(float(raw.replace(",", "") + (m.group("exp") or "").replace("−", "-")))
            except ValueError:
                continue
            if "," in raw:                       # "1,063" or a list "1,063": both readings
                vals.extend(float(p) for p in raw.split(",") if p and "." not in p)
        # numbers like 1e-05 without a leading mantissa digit group, and "1.2e+03"
        vals.extend(float(x) for x in re.findall(r"\d+(?:\.\d+)?[eE][-+]\d+", text))
        return vals

    def labelled_values(self, label: str) -> list[float]:
        """Output numbers that follow ``label`` within 40 characters on the same line."""
        vals = []
        for m in re.finditer(re.escape(label), self.output_text, re.I):
            tail = self.output_text[m.end():m.end() + 40].split("\n")[0]
            vals.extend(n.value for n in numbers_in(tail))
        return vals

    def markdown_numbers(self):
        """(cell index, number, sentence, paper-attributed) for every number of every Markdown cell."""
        for i, cell in enumerate(self.cells):
            if cell.get("cell_type") != "markdown":
                continue
            source = "".join(cell.get("source", ""))
            clean = clean_markdown(source)
            for start, end in _sentences(clean):
                sentence = clean[start:end]
                for n in numbers_in(sentence):
                    attributed = _attributed(sentence[:n.start])
                    shown = " ".join(source[start:end].split())
                    yield i, n, shown, attributed, _label(sentence, n.start)


def _attributed(before: str) -> bool:
    """True when the last cue before a number in its sentence names a paper (not "ours", "here", ...)."""
    paper = [m.end() for m in _PAPER.finditer(before)]
    if not paper:
        return False
    ours = [m.end() for m in _OURS.finditer(before)]
    return not ours or paper[-1] > ours[-1]


def load_allow(path: Path = ALLOW_FILE) -> dict:
    """The allow list and the pending prefixes: {"allow": [{notebook, number, reason}], "pending": [...]}."""
    if not Path(path).exists():
        return {"allow": [], "pending": []}
    data = tomllib.loads(Path(path).read_text())
    for entry in data.get("allow", []):
        missing = {"notebook", "number", "reason"} - set(entry)
        if missing or not str(entry.get("reason", "")).strip():
            raise ValueError(f"{path}: allow entry {entry} needs notebook, number and a reason")
    for entry in data.get("pending", []):
        if not {"prefix", "reason"} <= set(entry):
            raise ValueError(f"{path}: pending entry {entry} needs prefix and reason")
    return {"allow": data.get("allow", []), "pending": data.get("pending", [])}


def check_notebook(path: Path, allow: list[dict] | None = None) -> tuple[list[Finding], list[str]]:
    """Stale numbers of one notebook, and the allow entries for it that matched nothing."""
    nb = Notebook(path)
    allowed = [e for e in (allow or []) if e["notebook"] == nb.name]
    used = set()
    findings = []
    for i, n, sentence, attributed, label in nb.markdown_numbers():
        if attributed:
            continue
        if n.sig >= 3:
            why = f"{n.sig} significant digits"
        elif n.decimal:
            why = "a decimal"
        else:
            continue
        if any(n.matches(v) for v in nb.output_values) or any(n.matches(v) for v in nb.code_values):
            continue
        if n.decimal and label and label in nb.output_words:
            printed = nb.labelled_values(label)[:3]
            if printed:
                why += f"; '{label}' is printed with {', '.join(f'{v:g}' for v in printed)}"
        hit = [k for k, e in enumerate(allowed) if _same(e["number"], n)]
        if hit:
            used.update(hit)
            continue
        findings.append(Finding(nb.name, i, n.text, sentence, why))
    unused = [f"{nb.name}: allow entry {e['number']!r} ({e['reason']}) matches no number of the prose"
              for k, e in enumerate(allowed) if k not in used]
    return findings, unused


def _same(entry_number, n: Number) -> bool:
    """An allow entry names a number as written ("0.083", "1,063") or as a value."""
    text = str(entry_number).strip()
    if text == n.text or text == n.text.rstrip("%").strip():
        return True
    try:
        return math.isclose(float(text.replace(",", "")), n.value, rel_tol=1e-12)
    except ValueError:
        return False


def notebooks(root: Path = ROOT) -> list[Path]:
    """The committed notebooks ``notebooks/[folder/]NN_topic.ipynb``, in the order of their numbers (the pairs of the
    sources ``dplit.export.notebook_paths`` finds)."""
    sys.path.insert(0, str(ROOT))
    from dplit.export import notebook_paths

    return [p.with_suffix(".ipynb") for p in notebook_paths(root) if p.with_suffix(".ipynb").exists()]


def pending_reason(name: str, pending: list[dict]) -> str | None:
    """The reason a notebook is pending (its prefix is listed), else None."""
    for entry in pending:
        if name.startswith(str(entry["prefix"])):
            return entry["reason"]
    return None


def run(paths, allow_file: Path = ALLOW_FILE, strict: bool = False, out=sys.stdout) -> int:
    """Check the notebooks; print the findings; 1 when one is stale (outside a pending notebook), else 0."""
    config = load_allow(allow_file)
    status = 0
    total = pending_total = 0
    for path in paths:
        findings, unused = check_notebook(Path(path), config["allow"])
        reason = pending_reason(Path(path).stem, config["pending"])
        for problem in unused:
            print(f"UNUSED  {problem}", file=out)
            status = 1
        for f in findings:
            if reason and not strict:
                print(f"PENDING {f}", file=out)
                pending_total += 1
            else:
                print(f"STALE   {f}", file=out)
                total += 1
                status = 1
    print(f"{len(paths)} notebooks: {total} stale numbers, {pending_total} in pending notebooks", file=out)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks (default: every notebooks/NN_*.ipynb)")
    parser.add_argument("--allow", type=Path, default=ALLOW_FILE, help="the allow list (TOML)")
    parser.add_argument("--strict", action="store_true", help="findings in pending notebooks fail too")
    args = parser.parse_args(argv)
    paths = args.notebooks or notebooks()
    for p in paths:
        if not p.exists():
            parser.error(f"notebooks: {p} does not exist")
    return run(paths, args.allow, args.strict)


if __name__ == "__main__":
    sys.exit(main())
