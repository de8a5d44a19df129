# Hand-written module (not generated from a notebook).
"""Data loaders: the UCI tables of the Dirichlet-mechanism experiments, NLTCS and ATUS, read locally or downloaded.

Where a loader looks for a file, in order:

1. ``data_home`` (an argument);
2. the folder named by the environment variable ``DPLIT_DATA`` (files directly in it, or in its subfolders
   ``uci/``, ``nltcs/`` and ``atus/``). When ``DPLIT_DATA`` is unset and dplit runs from a source checkout with a
   development copy of the data beside it, that copy takes its place; an installed package has none, and
   ``DPLIT_DATA=""`` (set but empty) turns the lookup off;
3. the user cache, :func:`cache_dir` (``$DPLIT_CACHE``, else the operating system's cache folder for ``dplit``);
4. the few files shipped inside the package (``dplit/data``).

Only then, and only with ``download=True``, the file is downloaded into the cache through `pooch
<https://www.fatiando.org/pooch>`_ (a registry of URLs and sha256 checksums, retries): a file whose sha256 does
not match raises :class:`ChecksumError` and nothing is left in the cache. From a shell, ``python -m dplit.datasets
NAME ...`` downloads data sets by name (``--list`` lists them). Nothing downloads unless asked: a missing file
raises ``FileNotFoundError`` saying how to get it.

Tables come back as :class:`Table` (raw string cells, no pandas); :func:`encode_features` turns
them into the small integer codes a multinomial model counts (quantile bins for numeric columns,
Ponnoprat 2023, Sec. 5.1).

Data licences and citations (see :data:`UCI_DATASETS`, attribute ``citation``): the UCI Machine
Learning Repository distributes these data sets under CC BY 4.0 (Dua and Graff, UCI Machine
Learning Repository, 2017, http://archive.ics.uci.edu/ml, and the donors named per data set).
The six CSVs prepared by Ponnoprat for the paper are fetched from the paper's repository
(``donlapark/Dirichlet-Mechanism``, commit ``f59561a``); Adult and Bank Marketing from UCI.
``dplit/data/dirichlet_mechanism_GermanCredit.csv.gz`` (South German Credit, Groemping 2019, UCI #573, CC BY 4.0) is
shipped so that the examples and tests run with no download at all; scikit-learn's bundled
optical digits (:func:`load_digits`) likewise. NLTCS (:func:`load_nltcs`) comes from the benchmark repository
``UCLA-StarAI/Density-Estimation-Datasets`` (no licence stated, so not shipped); ATUS 2019 (:func:`load_atus`) from
the U.S. Bureau of Labor Statistics' public-domain activity summary file.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# The loaders a reader calls; the registry, the cache and the download plumbing stay importable for the tests and
# for `python -m dplit.datasets`, outside the public surface.
__all__ = [
    "Table",
    "ChecksumError",
    "load_uci",
    "load_digits",
    "train_test_split",
    "encode_features",
    "AtusTable",
    "load_atus",
    "load_acs_counts",
    "load_nltcs",
    "find_nltcs",
]

_PAPER_REPO = ("https://raw.githubusercontent.com/donlapark/Dirichlet-Mechanism/"
               "f59561a90d9d3b4b08f75eaedd71ccd45b4e5543/data/")
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
_PACKAGE_DATA = Path(__file__).resolve().parent / "data"
#: Attempts after a failed download (connection error, HTTP error or sha256 mismatch), 1 s, 2 s, ... apart.
DOWNLOAD_RETRIES = 2


class ChecksumError(OSError, ValueError):
    """A downloaded file does not have its recorded sha256 (nothing was kept in the cache)."""


@dataclass(frozen=True)
class _Source:
    """One file: local name, download URL, sha256 of the *uncompressed* content."""

    filename: str
    url: str
    sha256: str


@dataclass(frozen=True)
class _Spec:
    """How to read one data set (``subdir``: its folder in a copy laid out as ``$DPLIT_DATA/uci/...``)."""

    sources: tuple
    reader: str
    citation: str
    drop: tuple = ()
    subdir: str = "uci"


def _paper_csv(name, sha, citation):
    return _Spec((_Source(f"dirichlet_mechanism_{name}.csv.gz", _PAPER_REPO + f"{name}.csv", sha),),
                 "csv", citation)


#: The eight data sets of Ponnoprat (2023), Table 1.
UCI_DATASETS = {
    "CreditCard": _paper_csv(
        "CreditCard", "f4b274adcb0c2b4801922547f706c39166db99b5d3b1f5658d28490a0b299e8a",
        "Yeh and Lien (2009), Default of credit card clients, UCI #350, CC BY 4.0"),
    "Thyroid": _paper_csv(
        "Thyroid", "fa5d45ae5c1151690012bda9003abffc1991417afaa6383818a17b77cefe99ee",
        "Quinlan et al. (1986), Thyroid disease (ann), UCI #102, CC BY 4.0"),
    "Shopper": _paper_csv(
        "Shopper", "b560aac60d0c250fdd398729fc49da220b15e53f84635aec1bdeeeff09f06ffa",
        "Sakar et al. (2018), Online Shoppers Purchasing Intention, UCI #468, CC BY 4.0"),
    "Digit": _paper_csv(
        "Digit", "fef3b7691dfd4bf89bfc01f7f75b977822aec8612619889ad67d5315f30b319e",
        "Garris et al. (1997), Optical Recognition of Handwritten Digits, UCI #80, CC BY 4.0"),
    "GermanCredit": _paper_csv(
        "GermanCredit", "cb74b7f1e831d5204ad3fd848813d7f3d25aaa02ce04b158ab48a3d841f5338a",
        "Groemping (2019), South German Credit, UCI #573, CC BY 4.0"),
    "Spam": _paper_csv(
        "Spam", "c0e4f6842fec5e8b78ceea38a8db2c9b480a0f47fafa63948970c6fd859a4a2c",
        "Cranor and LaMacchia (1998), Spambase, UCI #94, CC BY 4.0"),
    "Bank": _Spec(
        (_Source("bank-additional-full.csv.gz",
                 "https://archive.ics.uci.edu/static/public/222/bank+marketing.zip",
                 "74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8"),),
        "bank", "Moro, Cortez and Rita (2014), Bank Marketing, UCI #222, CC BY 4.0"),
    "Adult": _Spec(
        (_Source("adult.data.gz", _UCI + "adult/adult.data",
                 "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
         _Source("adult.test.gz", _UCI + "adult/adult.test",
                 "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05")),
        "adult", "Kohavi (1996), Adult, UCI #2, CC BY 4.0", drop=("fnlwgt",)),
}

_ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                  "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                  "hours-per-week", "native-country", "income")

_STARAI = ("https://raw.githubusercontent.com/UCLA-StarAI/Density-Estimation-Datasets/"
           "37d53c1a8ba488d0a39e8c64bd3387577080b143/datasets/nltcs/")

#: Other data sets read through :func:`fetch_file` (not shipped: their licence is unclear).
OTHER_DATASETS = {
    "NLTCS": _Spec(tuple(_Source(f"nltcs.{part}.data.gz", _STARAI + f"nltcs.{part}.data", sha) for part, sha in (
        ("train", "e547a7aedad1dd2f7177030881ab1b92c7e24ae5464c71a0f1f89daecaf52b30"),
        ("valid", "93bbbf5c6febdc9bc6e5b5bfab636f4dc0685ab2896d24b23dd267794c3bfcf6"),
        ("test", "f9ffa6b74b27dc03bee3203d157ee31079e80b13be40d0c0093d635c25aed523"))),
        "nltcs", "National Long Term Care Survey, 16 binary ADL/IADL items, 21,574 people (Duke University Center "
        "for Demographic Studies, NIA grant U01-AG007198), as split by Lowd and Davis (2010) and distributed by "
        "UCLA-StarAI/Density-Estimation-Datasets (no licence stated: not shipped with dplit)", subdir="nltcs"),
}


@dataclass(frozen=True)
class Table:
    """A labelled table of raw cells.

    Attributes
    ----------
    name : str
    X : ndarray of str, shape (n, K)
        Feature cells as read (numbers still as text).
    y : ndarray of str, shape (n,)
        Class labels.
    feature_names : tuple of str
    citation : str
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple
    citation: str = ""
    classes: tuple = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "classes", tuple(np.unique(self.y).tolist()))

    @property
    def shape(self):
        """(rows, features)."""
        return self.X.shape


def cache_dir() -> Path:
    """The user cache for downloaded data: ``$DPLIT_CACHE``, else the OS cache folder (``pooch.os_cache("dplit")``).

    The OS folder comes from platformdirs: ``$XDG_CACHE_HOME/dplit`` or ``~/.cache/dplit`` on Linux,
    ``~/Library/Caches/dplit`` on macOS, ``%LOCALAPPDATA%\\dplit\\Cache`` on Windows.
    """
    env = os.environ.get("DPLIT_CACHE")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("dplit"))


def _checkout_data():
    """The development copy ``<checkout>/../shared/data`` when dplit runs from a source checkout that has one, else None."""
    root = Path(__file__).resolve().parents[1]
    dev = root.parent / "shared" / "data"
    return dev if (root / "pyproject.toml").is_file() and dev.is_dir() else None


def data_dir():
    """The local data folder: ``$DPLIT_DATA``; when unset, a development copy beside a source checkout; else None.

    ``DPLIT_DATA=""`` (set but empty) gives None. A data set may sit directly in the folder or in its subfolder
    (``uci/``, ``nltcs/``, ``atus/``).
    """
    env = os.environ.get("DPLIT_DATA")
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    return _checkout_data()


def dev_data_path(relative=""):
    """``relative`` inside :func:`data_dir`, or None when there is no local data folder.

    Kept for notebooks written before :func:`data_dir`: the development copy is only used when ``$DPLIT_DATA``
    names it or when dplit runs from a source checkout that has it beside it.
    """
    home = data_dir()
    return None if home is None else home / relative


def _folders(data_home, subdir):
    """The folders searched for a data set, in order (the subfolder ``subdir`` of each local one too)."""
    out = []
    for home in (data_home, data_dir()):
        if home:
            home = Path(home).expanduser()
            out += [home, home / subdir]
    return out + [cache_dir(), _PACKAGE_DATA]


def _sha256_of(path: Path) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    h = hashlib.sha256()
    with opener(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _registry_name(src: _Source) -> str:
    """The name of ``src``'s download in the cache (the archive's name for a zip, else the local name without .gz)."""
    if src.url.endswith(".zip"):
        return src.url.rsplit("/", 1)[-1]
    return src.filename[: -len(".gz")] if src.filename.endswith(".gz") else src.filename


def _pooch(sources):
    """A pooch registry of ``sources`` in :func:`cache_dir`: sha256 of each download (None for zips, checked inside)."""
    import pooch

    registry, urls = {}, {}
    for src in sources:
        key = _registry_name(src)
        registry[key] = None if src.url.endswith(".zip") else f"sha256:{src.sha256}"
        urls[key] = src.url
    return pooch.create(path=cache_dir(), base_url="", registry=registry, urls=urls,
                        retry_if_failed=DOWNLOAD_RETRIES)


def _gzip_into(src: _Source, target: Path):
    """A pooch processor: the download (or its zip member) gzipped under ``src.filename``, the download removed."""

    def process(fname, action, pup):
        raw = Path(fname)
        data = raw.read_bytes()
        if src.url.endswith(".zip"):
            data = _from_zip(data, src.filename[: -len(".gz")])
            if hashlib.sha256(data).hexdigest() != src.sha256:
                raw.unlink()
                raise ChecksumError(f"{src.filename[:-3]} inside {src.url} does not have the expected sha256 "
                                    f"{src.sha256}; nothing was kept in the cache")
        tmp = target.with_name(target.name + ".part")
        with gzip.GzipFile(tmp, "wb", mtime=0) as fh:
            fh.write(data)
        tmp.replace(target)
        raw.unlink()
        return str(target)

    return process


def _download(src: _Source, *, headers=None) -> Path:
    """Download ``src`` into the cache through pooch (sha256 checked, retried) and return the local path."""
    import pooch

    target = cache_dir() / src.filename
    downloader = pooch.HTTPDownloader(headers=headers) if headers else None
    try:
        path = _pooch([src]).fetch(_registry_name(src), downloader=downloader,
                                   processor=_gzip_into(src, target) if src.filename.endswith(".gz") else None)
    except ValueError as err:
        if "hash" not in str(err).lower():
            raise
        raise ChecksumError(f"downloaded {src.url} does not have the expected sha256 {src.sha256} (after "
                            f"{1 + DOWNLOAD_RETRIES} attempts); nothing was kept in the cache") from None
    return Path(path)


def _from_zip(raw: bytes, member: str) -> bytes:
    """The bytes of the file named ``member`` inside a zip archive, looking into nested zips too."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        for n in zf.namelist():
            if n.endswith("/" + member) or n == member:
                return zf.read(n)
        for n in zf.namelist():
            if n.endswith(".zip"):
                try:
                    return _from_zip(zf.read(n), member)
                except KeyError:
                    continue
    raise KeyError(f"{member} is not in the downloaded archive")


def _how_to_get(name):
    return (f"get it with `python -m dplit.datasets {name}` (a download into the user cache, sha256-checked), or "
            f"pass data_home= or set DPLIT_DATA to a folder that holds it")


def fetch_file(name, *, data_home=None, download=True) -> list[Path]:
    """Local paths of the files of data set ``name``, downloading into the cache if needed.

    Parameters
    ----------
    name : str
        A key of :data:`UCI_DATASETS` or :data:`OTHER_DATASETS`.
    data_home : str or Path, optional
        A folder holding the files under their local names (directly or in the data set's subfolder, e.g. ``uci/``).
    download : bool, default True
        Download what is missing into :func:`cache_dir` (checked against its sha256; see :data:`DOWNLOAD_RETRIES`).

    Returns
    -------
    list of Path

    Raises
    ------
    FileNotFoundError
        A file is in none of the places and ``download`` is False (the message says how to get it).
    ChecksumError
        A download does not have its recorded sha256.
    """
    spec = _spec(name)
    folders = _folders(data_home, spec.subdir)
    paths = []
    for src in spec.sources:
        found = next((f / src.filename for f in folders if (f / src.filename).is_file()), None)
        if found is None:
            if not download:
                raise FileNotFoundError(f"{name}: {src.filename} is not in data_home, $DPLIT_DATA, the user cache or "
                                        f"the package; {_how_to_get(name)}")
            found = _download(src)
        paths.append(found)
    return paths


def _spec(name):
    if name in OTHER_DATASETS:
        return OTHER_DATASETS[name]
    if name not in UCI_DATASETS:
        raise ValueError(f"name must be one of {sorted(UCI_DATASETS) + sorted(OTHER_DATASETS)}, got {name!r}")
    return UCI_DATASETS[name]


def _read_rows(path: Path, delimiter=","):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:
        return [row for row in csv.reader(fh, delimiter=delimiter, skipinitialspace=True) if row]


def load_uci(name, *, data_home=None, download=True) -> Table:
    """Load one of the eight tables of the naive Bayes experiment (Ponnoprat 2023, Table 1).

    The label is the last column of the paper's CSVs; Adult's train and test files are joined
    (48,842 rows, the paper's count) and ``fnlwgt`` (a census sampling weight) is dropped to leave
    the paper's 13 features; Bank is UCI's ``bank-additional-full.csv`` (41,188 rows, 20 features).

    Parameters
    ----------
    name : str
        One of ``UCI_DATASETS``: CreditCard, Thyroid, Shopper, Digit, GermanCredit, Spam, Bank, Adult.
    data_home, download
        See :func:`fetch_file`.

    Returns
    -------
    Table
    """
    spec = _spec(name)
    paths = fetch_file(name, data_home=data_home, download=download)
    if spec.reader == "csv":
        rows = _read_rows(paths[0])
        header, body = rows[0], rows[1:]
    elif spec.reader == "bank":
        rows = _read_rows(paths[0], delimiter=";")
        header, body = rows[0], rows[1:]
    else:  # adult: no header, test file starts with a comment line, labels end with '.'
        header = list(_ADULT_COLUMNS)
        body = [r for p in paths for r in _read_rows(p) if len(r) == len(header)]
        for r in body:
            r[-1] = r[-1].rstrip(".")
    data = np.array(body, dtype=str)
    keep = [j for j, h in enumerate(header[:-1]) if h not in spec.drop]
    return Table(name, data[:, keep], data[:, -1], tuple(header[j] for j in keep), spec.citation)


def load_digits() -> Table:
    """scikit-learn's bundled optical digits (1,797 x 64, pixel counts 0-16, labels 0-9), no download."""
    from sklearn.datasets import load_digits as _sk_digits

    bunch = _sk_digits()
    X = bunch.data.astype(int).astype(str)
    names = tuple(f"pixel{j}" for j in range(X.shape[1]))
    return Table("digits (scikit-learn)", X, bunch.target.astype(str), names,
                 "Alpaydin and Kaynak (1998), Optical Recognition of Handwritten Digits, UCI #80, "
                 "test part, as shipped by scikit-learn (BSD-3)")


def train_test_split(n, *, test_size=0.3, rng=None):
    """Random split of ``range(n)``: ``(train_index, test_index)`` with ``round(test_size n)`` test rows."""
    if not (isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must lie in (0, 1), got {test_size}")
    perm = np.random.default_rng(rng).permutation(n)
    n_test = min(max(int(round(test_size * n)), 1), n - 1)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _as_numbers(col):
    try:
        return col.astype(float)
    except ValueError:
        return None


def _quantile_codes(train, test, n_bins):
    """Codes of a numeric column: its very frequent values apart, the rest in training-quantile bins.

    A value keeps its own level while it is the i-th most frequent and holds more than n / 3^i of
    the training rows (the rule of the paper's code), so that e.g. a capital gain of 0 (91% of Adult)
    does not swallow every bin.
    """
    vals, cnt = np.unique(train, return_counts=True)
    heavy = []
    for i, o in enumerate(np.argsort(-cnt, kind="stable")):
        if cnt[o] <= train.size / 3.0 ** (i + 1):
            break
        heavy.append(vals[o])
    heavy = np.sort(np.array(heavy, dtype=float))
    rest = train[~np.isin(train, heavy)]
    edges = np.unique(np.quantile(rest, np.linspace(0, 1, n_bins + 1))[1:-1]) if rest.size else np.array([])

    def code(x):
        pos = np.searchsorted(heavy, x).clip(max=max(heavy.size - 1, 0))
        return np.where(np.isin(x, heavy), pos, heavy.size + np.searchsorted(edges, x, side="right"))

    return code(train), code(test), heavy.size + edges.size + 1


def encode_features(X_train, X_test, *, n_bins=10, min_distinct=30):
    """Integer codes for a multinomial model: numeric columns with many values go to quantile bins.

    A numeric column with more than ``min_distinct`` distinct training values is cut at the
    training quantiles into at most ``n_bins`` bins (ties merge bins); any other column is
    categorical, each distinct value its own code. Columns constant on the training part are
    dropped (as in the paper's code). Codes of test values never seen in training get their own
    extra level.

    Returns
    -------
    (codes_train, codes_test, n_levels)
        int64 arrays (n_train, K'), (n_test, K') and the number of levels of each kept column.
    """
    X_train, X_test = np.asarray(X_train), np.asarray(X_test)
    if X_train.ndim != 2 or X_test.ndim != 2 or X_train.shape[1] != X_test.shape[1]:
        raise ValueError("X_train and X_test must be 2-D with the same number of columns")
    if int(n_bins) < 2:
        raise ValueError(f"n_bins must be >= 2, got {n_bins}")
    tr_cols, te_cols, levels = [], [], []
    for j in range(X_train.shape[1]):
        a, b = X_train[:, j], X_test[:, j]
        na, nb = _as_numbers(a), _as_numbers(b)
        if na is not None and nb is not None and np.unique(na).size > min_distinct:
            ca, cb, k = _quantile_codes(na, nb, int(n_bins))
        else:
            cats, ca = np.unique(a, return_inverse=True)
            pos = np.searchsorted(cats, b)
            pos = np.minimum(pos, cats.size - 1)
            cb = np.where(cats[pos] == b, pos, cats.size)
            k = cats.size + int(np.any(cb == cats.size))
        if np.unique(ca).size < 2:
            continue
        tr_cols.append(ca)
        te_cols.append(cb)
        levels.append(k)
    return (np.column_stack(tr_cols).astype(np.int64), np.column_stack(te_cols).astype(np.int64),
            np.array(levels, dtype=np.int64))


#: Variable names of the ACS table, in the order of Nixon et al. (Table 3).
ACS_VARIABLES = ("CIT", "AGE", "RACE", "SEX", "INC")


def load_acs_counts():
    """The shipped 2^5 count table of ACS 2018 PUMS persons (14 states, 165,960 complete cases).

    The five binary variables of Nixon et al. (Table 1), in their order: CIT (1 = U.S. citizen), AGE
    (1 = 18 or over), RACE (1 = white alone), SEX (1 = female), INC (1 = income at or above the
    poverty line, POVPIP >= 100). Source: U.S. Census Bureau, American Community Survey 2018 1-year
    Public Use Microdata Sample, person files of DE, HI, ID, ME, MT, ND, NE, NH, NM, RI, SD, VT, WV
    and WY (public domain); 7,956 persons without a poverty status are left out.

    Returns
    -------
    (counts, names)
        An int64 array of shape (2, 2, 2, 2, 2) and :data:`ACS_VARIABLES`.
    """
    counts = np.zeros((2,) * 5, dtype=np.int64)
    with gzip.open(_PACKAGE_DATA / "acs2018_pums_5binary_counts.csv.gz", "rt") as fh:
        rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))][1:]
    for r in rows:
        counts[tuple(int(v) for v in r[:5])] = int(r[5])
    return counts, ACS_VARIABLES




def load_nltcs(*, data_home=None, download=True):
    """The NLTCS benchmark: 21,574 people x 16 binary disability items (train, valid and test files joined).

    Read from ``data_home``, ``$DPLIT_DATA`` (or its ``nltcs/``) or the user cache, or downloaded (sha256-checked)
    from ``UCLA-StarAI/Density-Estimation-Datasets`` (see :data:`OTHER_DATASETS`; not shipped, as its licence is
    unclear). Nixon et al. (Sec. 5) use the 2004 wave (15,636 people, their Table 4); this benchmark
    file pools the survey's people, coded 0/1 as the benchmark distributes it (about a third of the
    entries are 1).

    Returns
    -------
    ndarray of int64, shape (21574, 16)
    """
    paths = fetch_file("NLTCS", data_home=data_home, download=download)
    return np.concatenate([np.array(_read_rows(p), dtype=np.int64) for p in paths])


def find_nltcs(*, download=False):
    """The NLTCS records from :func:`load_nltcs`'s usual places; None, with one line saying how to get them, if absent.

    For notebooks that fall back to a stand-in when the data cannot be had. Nothing is downloaded unless
    ``download=True``.
    """
    try:
        return load_nltcs(download=download)
    except OSError as err:
        what = "the download failed" if download else "not in $DPLIT_DATA or the user cache"
        print(f"NLTCS benchmark file: {what} ({type(err).__name__}); {_how_to_get('NLTCS')}")
        return None


# ATUS (Guo et al., Sec. 5.2): the public-domain BLS activity summary file, never the IPUMS extract.
ATUS_URL = "https://www.bls.gov/tus/datafiles/atussum-2019.zip"
#: sha256 of ``atussum-2019.zip`` as recorded by a third party (a mismatch warns: BLS revises files now and then).
ATUS_SHA256 = "4c5fd39c706a180e82b4a7fa28c8c3739c4bfd6704fd4759f507bd1de6a01627"
#: Columns of the derived table: minutes of the diary day in personal care (t01*), eating and drinking (t11*),
#: everything else, and the minutes coded to a real activity (all but the 50xxxx data codes).
ATUS_COLUMNS = ("tucaseid", "tesex", "pcare_min", "eat_min", "other_min", "diary_coded_min")
#: Files :func:`load_atus` looks for in ``$DPLIT_DATA`` (or its ``atus/``) and the cache, in order: the BLS zip, the
#: ``.dat`` inside it, and a derived table with the columns :data:`ATUS_COLUMNS` (as the development copy holds).
ATUS_FILES = ("atussum-2019.zip", "atussum_2019.dat", "atus2019_pcare_eat_other_ipums.csv")


@dataclass(frozen=True)
class AtusTable:
    """One row per ATUS respondent (columns :data:`ATUS_COLUMNS`, int64 but ``tucaseid`` as str)."""

    tucaseid: np.ndarray
    tesex: np.ndarray
    pcare_min: np.ndarray
    eat_min: np.ndarray
    other_min: np.ndarray
    diary_coded_min: np.ndarray
    source: str = ""

    def __len__(self):
        return int(self.tesex.size)


def _atus_from_rows(header, rows, source):
    """Derive the table from atussum rows (BLS layout: TUCASEID, TESEX, t<6-digit code> minutes)."""
    low = [h.strip().lower() for h in header]
    for need in ("tucaseid", "tesex"):
        if need not in low:
            raise ValueError(f"{source}: no {need.upper()} column: not an ATUS activity summary file")
    act = [j for j, h in enumerate(low) if len(h) == 7 and h[0] == "t" and h[1:].isdigit()]
    if not act:
        raise ValueError(f"{source}: no activity columns t<6 digits>: not an ATUS activity summary file")
    mins = np.array([[int(r[j]) for j in act] for r in rows], dtype=np.int64).reshape(len(rows), len(act))
    codes = [low[j][1:] for j in act]
    pick = lambda tier: mins[:, [k for k, c in enumerate(codes) if c.startswith(tier)]].sum(axis=1)  # noqa: E731
    pcare, eat = pick("01"), pick("11")
    coded = mins.sum(axis=1) - pick("50")
    return AtusTable(np.array([r[low.index("tucaseid")].strip() for r in rows]),
                     np.array([int(r[low.index("tesex")]) for r in rows], dtype=np.int64),
                     pcare, eat, 1440 - pcare - eat, coded, str(source))


def _read_atus_text(text, source):
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    header, body = rows[0], rows[1:]
    low = [h.strip().lower() for h in header]
    if tuple(low) == ATUS_COLUMNS:   # an already derived table (e.g. the development copy)
        cols = list(zip(*body)) if body else [()] * len(ATUS_COLUMNS)
        ints = [np.array(c, dtype=np.int64) for c in cols[1:]]
        return AtusTable(np.array(cols[0], dtype=str), *ints, source=str(source))
    return _atus_from_rows(header, body, source)




def _download_atus(contact: str) -> Path:
    """Download the BLS zip into the cache with a User-Agent naming the caller (BLS asks this of scripts)."""
    import warnings

    from dplit import __version__

    src = _Source(ATUS_FILES[0], ATUS_URL, ATUS_SHA256)
    path = _download(src, headers={"User-Agent": f"dplit/{__version__} ({contact})"})
    if _sha256_of(path) != ATUS_SHA256:
        warnings.warn(f"{ATUS_URL} does not have the recorded sha256 {ATUS_SHA256} (revised by BLS?)", stacklevel=3)
    return path


def load_atus(path=None, *, download=True, contact=None) -> AtusTable:
    """The ATUS 2019 respondents as minutes in personal care, eating and drinking, and everything else.

    Reads the public-domain BLS activity summary file (``atussum-2019.zip`` or the ``atussum_2019.dat`` inside
    it; U.S. Bureau of Labor Statistics, American Time Use Survey 2019, https://www.bls.gov/tus/): personal care is
    the sum of the ``t01*`` columns, eating and drinking of ``t11*``, other the rest of the 1,440 minutes;
    ``diary_coded_min`` leaves out the 50xxxx data codes (time the diary could not code). A CSV with the columns
    :data:`ATUS_COLUMNS` (an already derived table) is read as it is.

    Parameters
    ----------
    path : str or Path, optional
        The zip, the ``.dat`` or a derived CSV. Default: the first of :data:`ATUS_FILES` in ``$DPLIT_DATA`` (or its
        ``atus/``) or the user cache (:func:`cache_dir`), else the zip downloaded from BLS into the cache.
    download : bool, default True
        Allow the download (it also needs ``contact``).
    contact : str, optional
        Contact details for the User-Agent of the download (BLS asks scripted downloads to identify
        themselves), e.g. an e-mail address; default ``$DPLIT_CONTACT``.

    Returns
    -------
    AtusTable
        ``source`` is the file's name (not its folder).
    """
    if path is None:
        folders = _folders(None, "atus")[:-1]          # no ATUS file ships with the package
        path = next((f / n for n in ATUS_FILES for f in folders if (f / n).is_file()), None)
        if path is None:
            contact = contact or os.environ.get("DPLIT_CONTACT")
            how = (f"download {ATUS_URL} (public domain) into $DPLIT_DATA, or pass contact= (or set DPLIT_CONTACT) "
                   "and download=True to let load_atus download it into the user cache")
            if not download:
                raise FileNotFoundError(f"ATUS 2019: {ATUS_FILES[0]} is not in $DPLIT_DATA or the user cache; {how}")
            if not contact:
                raise ValueError("contact must name you (e.g. an e-mail address) for the BLS download's User-Agent; "
                                 "pass contact= or set DPLIT_CONTACT, or download the file yourself and pass path=")
            path = _download_atus(contact)
    path = Path(path)
    if path.suffix == ".zip":
        import zipfile

        with zipfile.ZipFile(path) as zf:
            member = next((m for m in zf.namelist() if m.lower().endswith(".dat") and "atussum" in m.lower()), None)
            if member is None:
                raise ValueError(f"{path.name}: no atussum .dat file inside")
            text = zf.read(member).decode("latin-1")
    else:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="latin-1") as fh:
            text = fh.read()
    return _read_atus_text(text, path.name)


def _main(argv=None):
    """``python -m dplit.datasets NAME ...``: download data sets into the user cache (``--list``: their names)."""
    import argparse

    names = sorted(UCI_DATASETS) + sorted(OTHER_DATASETS) + ["ATUS"]
    ap = argparse.ArgumentParser(prog="python -m dplit.datasets", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"data sets to download: {', '.join(names)}")
    ap.add_argument("--list", action="store_true", help="list the data sets and where each is found")
    ap.add_argument("--contact", help="for ATUS: your e-mail address, for the BLS download's User-Agent")
    args = ap.parse_args(argv)
    if args.list or not args.names:
        for n in names:
            try:
                found = load_atus(download=False).source if n == "ATUS" else \
                    ", ".join(p.name for p in fetch_file(n, download=False))
                state = f"found ({found})"
            except OSError:
                state = "not found"
            print(f"{n:14s} {state}")
        print(f"user cache: {cache_dir()}")
        return 0
    for n in args.names:
        if n == "ATUS":
            load_atus(contact=args.contact)
        elif n in UCI_DATASETS or n in OTHER_DATASETS:
            fetch_file(n)
        else:
            ap.error(f"unknown data set {n!r}; one of {', '.join(names)}")
        print(f"{n}: ready")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
