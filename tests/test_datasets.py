"""dplit.datasets: local copies, the user cache, downloads (to a local URL), encoding."""

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from dplit import datasets

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/uci (development copy) is absent")


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path / "c"))
    assert datasets.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("DPLIT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert datasets.cache_dir() == tmp_path / "dplit"


def test_german_credit_ships_with_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path))
    monkeypatch.delenv("DPLIT_DATA", raising=False)
    table = datasets.load_uci("GermanCredit", download=False)
    assert table.shape == (1000, 20) and table.classes == ("0", "1")
    assert np.sum(table.y == "1") == 700
    assert "CC BY 4.0" in table.citation


def test_missing_file_without_download_names_the_way_out(monkeypatch, tmp_path):
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path))
    monkeypatch.delenv("DPLIT_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="data_home"):
        datasets.load_uci("Spam", download=False)
    with pytest.raises(ValueError, match="name"):
        datasets.load_uci("Iris")


def test_download_goes_to_the_cache_and_checks_sha256(monkeypatch, tmp_path):
    body = b"a,b,label\n1,x,0\n2,y,1\n3,x,1\n"
    src_file = tmp_path / "Toy.csv"
    src_file.write_bytes(body)
    good = datasets._Spec((datasets._Source("toy.csv.gz", src_file.as_uri(),
                                            hashlib.sha256(body).hexdigest()),), "csv", "toy")
    monkeypatch.setitem(datasets.UCI_DATASETS, "Toy", good)
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path / "cache"))
    table = datasets.load_uci("Toy")
    assert (tmp_path / "cache" / "toy.csv.gz").is_file()
    assert table.shape == (3, 2) and table.feature_names == ("a", "b")
    with gzip.open(tmp_path / "cache" / "toy.csv.gz", "rb") as fh:
        assert fh.read() == body
    bad = datasets._Spec((datasets._Source("bad.csv.gz", src_file.as_uri(), "0" * 64),), "csv", "toy")
    monkeypatch.setitem(datasets.UCI_DATASETS, "Bad", bad)
    with pytest.raises(OSError, match="sha256"):
        datasets.load_uci("Bad")
    assert not (tmp_path / "cache" / "bad.csv.gz").exists()


@needs_shared
@pytest.mark.parametrize("name, shape, n_classes", [
    ("Adult", (48842, 13), 2), ("Bank", (41188, 20), 2), ("Thyroid", (7200, 21), 3), ("Digit", (5620, 64), 10)])
def test_shared_copies_load_with_the_paper_shapes(name, shape, n_classes):
    table = datasets.load_uci(name, data_home=SHARED, download=False)
    assert table.shape == shape and len(table.classes) == n_classes


@needs_shared
def test_shared_copies_have_the_recorded_checksums():
    for spec in datasets.UCI_DATASETS.values():
        for src in spec.sources:
            assert datasets._sha256_of(SHARED / src.filename) == src.sha256


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


@pytest.mark.skipif(not (SHARED.parent / "nltcs").is_dir(), reason="../shared/data/nltcs (development copy) is absent")
def test_find_nltcs_reads_the_development_copy_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                      # not notebooks/: the copy is found from the package
    x = datasets.find_nltcs()
    assert x.shape == (21574, 16) and set(np.unique(x)) == {0, 1}


@pytest.mark.skipif(not SHARED.parent.is_dir(), reason="../shared/data (development copy) is absent")
def test_dev_data_path_is_found_from_the_package_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert datasets.dev_data_path().resolve() == SHARED.parent.resolve()
    assert datasets.dev_data_path("uci").is_dir() == (SHARED.parent / "uci").is_dir()
