"""Tests of the ATUS loader (dplit.datasets.load_atus) and dplit.atus."""

import io
import zipfile

import numpy as np
import pytest
from _helpers import file_server

from dplit import atus, datasets

BLS = ("TUCASEID,TUFINLWGT,TESEX,TEAGE,t010101,t010201,t110101,t110201,t120303,t500101\n"
       "20190101190022,123.4,2,85,600,90,25,5,720,0\n"
       "20190101190031,99.0,1,25,500,40,60,0,810,30\n"
       "20190101190057,99.0,1,30,700,0,0,0,740,0\n")


def _zip_bytes(text):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("atussum_2019.dat", text)
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["dat", "zip"])
def test_parser_on_bls_layout(tmp_path, kind):
    p = tmp_path / ("atussum_2019.dat" if kind == "dat" else "atussum-2019.zip")
    p.write_bytes(BLS.encode() if kind == "dat" else _zip_bytes(BLS))
    t = datasets.load_atus(p)
    assert len(t) == 3 and list(t.tesex) == [2, 1, 1]
    assert list(t.pcare_min) == [690, 540, 700] and list(t.eat_min) == [30, 60, 0]
    assert list(t.other_min) == [720, 840, 740] and list(t.diary_coded_min) == [1440, 1410, 1440]


def test_parser_rejects_other_files(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="TUCASEID"):
        datasets.load_atus(p)


def test_download_sends_contact_user_agent(tmp_path, monkeypatch):
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path))
    monkeypatch.setenv("DPLIT_DATA", "")
    monkeypatch.delenv("DPLIT_CONTACT", raising=False)
    with pytest.raises(ValueError, match="contact"):
        datasets.load_atus()
    with pytest.raises(FileNotFoundError, match="bls.gov") as err:
        datasets.load_atus(download=False)
    assert str(tmp_path) not in str(err.value)
    with file_server(monkeypatch) as (base, srv):
        srv.files["/atussum-2019.zip"] = _zip_bytes(BLS)
        monkeypatch.setattr(datasets, "ATUS_URL", base + "/atussum-2019.zip")
        with pytest.warns(UserWarning, match="sha256"):
            t = datasets.load_atus(contact="me@example.org")
        ((path, ua),) = srv.seen
        assert path == "/atussum-2019.zip" and "me@example.org" in ua and ua.startswith("dplit/")
        assert len(t) == 3 and (tmp_path / "atussum-2019.zip").is_file() and t.source == "atussum-2019.zip"
        assert len(datasets.load_atus()) == 3          # now from the cache, no download
        assert len(srv.seen) == 1


def test_compositions_rules(tmp_path):
    p = tmp_path / "atussum_2019.dat"
    p.write_text(BLS)
    t = datasets.load_atus(p)
    g = atus.atus_compositions(t, rule="pcare_eat")
    assert len(g["female"]) == 1 and len(g["male"]) == 1
    assert np.allclose(g["female"].sum(axis=1), 1)
    assert len(atus.atus_compositions(t)["male"]) == 0      # 30 uncoded minutes
    with pytest.raises(ValueError, match="rule"):
        atus.atus_compositions(t, rule="x")
    with pytest.raises(TypeError, match="table"):
        atus.atus_compositions(np.zeros(3))


def test_paper_counts_from_the_real_data():
    try:
        table = datasets.load_atus(download=False)
    except FileNotFoundError:
        pytest.skip("needs ATUS 2019: download https://www.bls.gov/tus/datafiles/atussum-2019.zip into $DPLIT_DATA "
                    "(or `python -m dplit.datasets ATUS --contact you@example.org`)")
    g = atus.atus_compositions(table)
    assert (len(g["male"]), len(g["female"])) == (3359, 3766)


def test_h0_probability_closed_form():
    from scipy.stats import norm

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.02, 0.01, (50000, 3)), rng.normal(0.0, 0.01, (50000, 3))
    s = 0.01 * np.sqrt(2)
    exact = norm.cdf(-0.01 / s) - norm.cdf(-0.03 / s)
    assert np.allclose(atus.h0_probability(a, b, rng=2), exact, atol=0.01)
    assert atus.interval_reject(a + 0.05, b).all() and not atus.interval_reject(a, b).any()


def test_analyse_on_simulated_groups():
    from dplit.dirichlet import dirichlet_draws

    groups = {"male": dirichlet_draws([40.0, 5.0, 55.0], 3000, rng=1),
              "female": dirichlet_draws([42.0, 5.0, 53.0], 3000, rng=2)}
    for m in ("dpboots", "dpremcmc_p1"):
        r = atus.analyse(groups, m, 1.0, rng=3)
        assert r["reject"].shape == (3,) and np.allclose(r["mean"]["male"].sum(), 1)
    t = atus.table2({"dpboots": [atus.analyse(groups, "dpboots", 1.0, rng=4)]})
    assert set(t["sex"]) == {"male", "female"}


def test_agreement_by_privacy_counts_private_and_non_private_apart():
    planted = [(m, True) for m in ("boots", "mcmc_p1") for _ in range(3)] + [("dpmcmc_p1", i < 4) for i in range(15)]
    assert atus.agreement_by_privacy(planted) == {"private": (4, 15), "non-private": (6, 6)}
    assert atus.agreement_by_privacy([("dpboots", False), ("dpabc_p5", True)]) == {
        "private": (1, 2), "non-private": (0, 0)}
    with pytest.raises(ValueError, match="method"):
        atus.agreement_by_privacy([("dpmcmc", True)])
