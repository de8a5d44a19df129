"""dplit.datasets: local copies, the user cache, downloads through pooch (from a file server on loopback), encoding.

No test here reaches the network: downloads go to an HTTP server on 127.0.0.1 started by the test, and the
tests of the real files skip, saying how to get them, when no local copy is there.
"""

import gzip
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from _helpers import file_server

from dplit import datasets

PAPER_SHAPES = [("Adult", (48842, 13), 2), ("Bank", (41188, 20), 2), ("Thyroid", (7200, 21), 3),
                ("Digit", (5620, 64), 10)]


def _local_or_skip(name):
    """The local files of ``name`` ($DPLIT_DATA, a development copy beside the checkout, or the cache), else skip."""
    try:
        return datasets.fetch_file(name, download=False)
    except FileNotFoundError:
        pytest.skip(f"needs the {name} files: `python -m dplit.datasets {name}` downloads them, or set DPLIT_DATA "
                    f"to a folder that holds them")


@pytest.fixture
def no_local_data(monkeypatch, tmp_path):
    """A user's machine: an empty cache, no $DPLIT_DATA and no development copy."""
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DPLIT_DATA", "")
    return tmp_path / "cache"


@pytest.fixture
def server(monkeypatch):
    """An HTTP file server on loopback (see ``_helpers.file_server``)."""
    with file_server(monkeypatch) as srv:
        yield srv


def _toy(monkeypatch, base, name, sha, *, filename="toy.csv.gz", path="/Toy.csv"):
    spec = datasets._Spec((datasets._Source(filename, base + path, sha),), "csv", "toy")
    monkeypatch.setitem(datasets.UCI_DATASETS, name, spec)


BODY = b"a,b,label\n1,x,0\n2,y,1\n3,x,1\n"


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    import pooch

    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path / "c"))
    assert datasets.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("DPLIT_CACHE")
    assert datasets.cache_dir() == Path(pooch.os_cache("dplit"))
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        assert datasets.cache_dir() == tmp_path / "dplit"


def test_german_credit_ships_with_the_package(no_local_data):
    table = datasets.load_uci("GermanCredit", download=False)
    assert table.shape == (1000, 20) and table.classes == ("0", "1")
    assert np.sum(table.y == "1") == 700
    assert "CC BY 4.0" in table.citation


def test_missing_file_without_download_says_how_to_get_it(no_local_data):
    with pytest.raises(FileNotFoundError, match=r"python -m dplit\.datasets Spam") as err:
        datasets.load_uci("Spam", download=False)
    assert "data_home" in str(err.value) and str(no_local_data) not in str(err.value)
    with pytest.raises(ValueError, match="name"):
        datasets.load_uci("Iris")


def test_data_dir_flat_or_by_data_set_and_empty_turns_it_off(monkeypatch, tmp_path):
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path / "cache"))
    for folder in (tmp_path / "flat", tmp_path / "tree" / "uci"):
        folder.mkdir(parents=True)
        with gzip.open(folder / "toy.csv.gz", "wb") as fh:
            fh.write(BODY)
    _toy(monkeypatch, "http://127.0.0.1:9", "Toy", hashlib.sha256(BODY).hexdigest())
    for home in (tmp_path / "flat", tmp_path / "tree"):
        monkeypatch.setenv("DPLIT_DATA", str(home))
        assert datasets.data_dir() == home and datasets.dev_data_path("uci") == home / "uci"
        assert datasets.load_uci("Toy", download=False).shape == (3, 2)
    monkeypatch.setenv("DPLIT_DATA", "")
    assert datasets.data_dir() is None and datasets.dev_data_path("uci") is None
    with pytest.raises(FileNotFoundError):
        datasets.load_uci("Toy", download=False)
    assert datasets.load_uci("Toy", data_home=tmp_path / "tree", download=False).shape == (3, 2)


def test_development_copy_only_beside_a_source_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv("DPLIT_DATA", raising=False)
    monkeypatch.setattr(datasets, "_checkout_data", lambda: None)     # an installed package
    assert datasets.data_dir() is None
    monkeypatch.setattr(datasets, "_checkout_data", lambda: tmp_path)
    assert datasets.data_dir() == tmp_path
    monkeypatch.setenv("DPLIT_DATA", str(tmp_path / "mine"))          # $DPLIT_DATA comes first
    assert datasets.data_dir() == tmp_path / "mine"


def test_download_goes_to_the_cache_gzipped(no_local_data, server, monkeypatch):
    base, srv = server
    srv.files["/Toy.csv"] = BODY
    _toy(monkeypatch, base, "Toy", hashlib.sha256(BODY).hexdigest())
    table = datasets.load_uci("Toy")
    assert table.shape == (3, 2) and table.feature_names == ("a", "b")
    assert sorted(p.name for p in no_local_data.iterdir()) == ["toy.csv.gz"]     # the raw download is gone
    with gzip.open(no_local_data / "toy.csv.gz", "rb") as fh:
        assert fh.read() == BODY
    assert datasets.load_uci("Toy", download=False).shape == (3, 2)
    datasets.load_uci("Toy")
    assert len(srv.seen) == 1                                                     # read from the cache after


def test_checksum_failure_raises_and_leaves_nothing_in_the_cache(no_local_data, server, monkeypatch):
    base, srv = server
    srv.files["/Toy.csv"] = BODY
    _toy(monkeypatch, base, "Bad", "0" * 64, filename="bad.csv.gz")
    monkeypatch.setattr(datasets, "DOWNLOAD_RETRIES", 1)
    with pytest.raises(datasets.ChecksumError, match="sha256") as err:
        datasets.load_uci("Bad")
    assert isinstance(err.value, OSError) and "nothing was kept" in str(err.value)
    assert len(srv.seen) == 2                                                     # tried again once
    assert not no_local_data.exists() or not any(no_local_data.iterdir())


def test_failed_download_is_retried(no_local_data, server, monkeypatch):
    base, srv = server
    srv.files["/Toy.csv"] = BODY
    srv.fail["/Toy.csv"] = 2
    _toy(monkeypatch, base, "Toy", hashlib.sha256(BODY).hexdigest())
    monkeypatch.setattr(datasets, "DOWNLOAD_RETRIES", 2)
    assert datasets.load_uci("Toy").shape == (3, 2)
    assert len(srv.seen) == 3
    srv.fail["/Toy.csv"], srv.files["/Other.csv"] = 0, BODY
    monkeypatch.setattr(datasets, "DOWNLOAD_RETRIES", 0)
    srv.fail["/Other.csv"] = 1
    _toy(monkeypatch, base, "Other", hashlib.sha256(BODY).hexdigest(), filename="other.csv.gz", path="/Other.csv")
    with pytest.raises(OSError, match="503"):
        datasets.load_uci("Other")
    assert not (no_local_data / "other.csv.gz").exists()


def test_download_of_a_zip_checks_the_member(no_local_data, server, monkeypatch):
    base, srv = server
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("outer/inner.csv", BODY)
    srv.files["/arch.zip"] = buf.getvalue()
    good = datasets._Spec((datasets._Source("inner.csv.gz", base + "/arch.zip", hashlib.sha256(BODY).hexdigest()),),
                          "csv", "toy")
    monkeypatch.setitem(datasets.UCI_DATASETS, "Zipped", good)
    assert datasets.load_uci("Zipped").shape == (3, 2)
    assert sorted(p.name for p in no_local_data.iterdir()) == ["inner.csv.gz"]
    (no_local_data / "inner.csv.gz").unlink()
    bad = datasets._Spec((datasets._Source("inner.csv.gz", base + "/arch.zip", "1" * 64),), "csv", "toy")
    monkeypatch.setitem(datasets.UCI_DATASETS, "Zipped", bad)
    with pytest.raises(datasets.ChecksumError, match="sha256"):
        datasets.load_uci("Zipped")
    assert not any(no_local_data.iterdir())


def test_find_nltcs_says_in_one_line_how_to_get_it(no_local_data, capsys):
    assert datasets.find_nltcs() is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "python -m dplit.datasets NLTCS" in out and str(no_local_data) not in out


def test_command_line_lists_and_downloads(no_local_data, server, monkeypatch, capsys):
    base, srv = server
    srv.files["/Toy.csv"] = BODY
    _toy(monkeypatch, base, "Toy", hashlib.sha256(BODY).hexdigest())
    assert datasets._main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert "GermanCredit   found" in listing and "Toy            not found" in listing
    assert datasets._main(["Toy"]) == 0 and "Toy: ready" in capsys.readouterr().out
    assert (no_local_data / "toy.csv.gz").is_file()


@pytest.mark.parametrize("name, shape, n_classes", PAPER_SHAPES)
def test_real_copies_load_with_the_paper_shapes(name, shape, n_classes):
    _local_or_skip(name)
    table = datasets.load_uci(name, download=False)
    assert table.shape == shape and len(table.classes) == n_classes


@pytest.mark.parametrize("name", sorted(datasets.UCI_DATASETS) + sorted(datasets.OTHER_DATASETS))
def test_real_copies_have_the_recorded_checksums(name):
    paths = _local_or_skip(name)
    for src, path in zip(datasets._spec(name).sources, paths):
        assert datasets._sha256_of(path) == src.sha256


def test_real_nltcs_from_any_working_directory(tmp_path, monkeypatch):
    _local_or_skip("NLTCS")
    monkeypatch.chdir(tmp_path)                      # not notebooks/: the copy is found from the package
    x = datasets.find_nltcs()
    assert x.shape == (21574, 16) and set(np.unique(x)) == {0, 1}


def test_digits_from_scikit_learn():
    pytest.importorskip("sklearn")
    table = datasets.load_digits()
    assert table.shape == (1797, 64) and len(table.classes) == 10


def test_split_and_encoding():
    tr, te = datasets.train_test_split(100, test_size=0.3, rng=0)
    assert tr.size == 70 and te.size == 30 and np.intersect1d(tr, te).size == 0
    rng = np.random.default_rng(0)
    num = np.where(rng.random(500) < 0.8, 0.0, rng.exponential(size=500))     # mostly zeros
    X = np.column_stack([num.astype(str), rng.choice(["a", "b", "c"], 500), np.full(500, "k")])
    ctr, cte, levels = datasets.encode_features(X[:400], X[400:], n_bins=10)
    assert levels.size == 2                     # the constant column is dropped
    assert levels[0] >= 8 and levels[1] == 3    # the zeros keep a level, the rest is binned
    assert np.all(ctr < levels) and np.all(cte < levels)
    counts = np.bincount(ctr[:, 0])
    assert counts[0] == np.sum(num[:400] == 0)
    with pytest.raises(ValueError, match="test_size"):
        datasets.train_test_split(10, test_size=1.5)
