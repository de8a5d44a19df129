"""Tests of dplit.peers: the common PeerEstimate, the private-pgm and PrivBayes wrappers (skipped, with the reason,
when the optional peer is not installed: `pip install dplit[peers]`), our model as a peer, errors, comparison."""

import itertools
import random
import subprocess
import sys

import numpy as np
import pytest

from dplit import peers
from dplit.latent_class import margin_counts, release_margins
from dplit.peers import (
    PeerEstimate,
    _bn_table,
    _mutual_information_codes,
    all_pairs,
    compare_methods,
    estimate_errors,
    geometric_sd,
    latent_class_estimate,
    pgm_fit,
    privbayes_fit,
)


def _have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


needs_pgm = pytest.mark.skipif(not _have("mbi"), reason="mbi (private-pgm) not installed: pip install dplit[peers]")
needs_ds = pytest.mark.skipif(not _have("DataSynthesizer"),
                              reason="DataSynthesizer (PrivBayes) not installed: pip install dplit[peers]")


def _records(n=3000, p=4, seed=0):
    g = np.random.default_rng(seed)
    z = g.random(n) < 0.4
    return (g.random((n, p)) < np.where(z[:, None], 0.8, 0.2)).astype(np.int64)


def _table(x, levels):
    return np.bincount(np.ravel_multi_index(x.T, levels), minlength=int(np.prod(levels))).reshape(levels) / len(x)


def test_peers_are_not_imported_at_import_time():
    code = ("import sys, dplit.peers; bad = [m for m in ('mbi', 'jax', 'DataSynthesizer') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_peer_says_how_to_install(monkeypatch):
    with pytest.raises(ImportError, match=r"pip install dplit\[peers\]"):
        peers._require("no_such_module_here", "mbi")

    def missing(module, dist):
        raise ImportError(f"{dist} is not installed: pip install dplit[peers]")

    monkeypatch.setattr(peers, "_require", missing)
    out = compare_methods(_records(500), 1.0, methods=("pgm", "privbayes"))
    assert set(out["skipped"]) == {"pgm", "privbayes"} and not out["estimates"]
    assert all("pip install dplit[peers]" in r for r in out["skipped"].values())


def test_peer_estimate_margins_match_margin_counts():
    x = np.random.default_rng(1).integers(0, [2, 3, 2], size=(400, 3))
    est = PeerEstimate("t", 1.0, (2, 3, 2), _table(x, (2, 3, 2)))
    for m in [(0,), (1, 0), (2, 1), (0, 1, 2), (2, 0, 1)]:
        assert np.allclose(est.margin(m), margin_counts(x, [m], (2, 3, 2))[0] / 400)
    for bad in [(0, 0), (5,), ()]:
        with pytest.raises(ValueError, match="margin"):
            est.margin(bad)
    assert not est.has_intervals


def test_geometric_sd_matches_simulation():
    from dplit.mechanisms import sample_two_sided_geometric

    t = 0.7
    draws = sample_two_sided_geometric(t, 200_000, rng=3)
    assert abs(draws.std() / geometric_sd(t) - 1) < 0.02
    with pytest.raises(ValueError, match="t"):
        geometric_sd(1.0)


def test_mutual_information_matches_the_package_formula():
    import pandas as pd
    from sklearn.metrics import mutual_info_score

    g = np.random.default_rng(2)
    df = pd.DataFrame(g.integers(0, 3, size=(300, 3)), columns=list("abc")).astype(str)
    df["c"] = np.where(g.random(300) < 0.6, df["a"], df["c"])
    for child, parents in [("a", ["b"]), ("a", ["c"]), ("c", ["a", "b"])]:
        joined = df[parents].apply(lambda r: " ".join(r.values), axis=1) if len(parents) > 1 else df[parents[0]]
        assert abs(_mutual_information_codes(df[child], df[parents]) - mutual_info_score(df[child], joined)) < 1e-12


def test_bn_table_is_the_product_of_conditionals():
    g = np.random.default_rng(4)
    joint = g.dirichlet(np.ones(12)).reshape(2, 3, 2)
    net = [("b", ["a"]), ("c", ["b", "a"])]
    cond = {"a": joint.sum(axis=(1, 2)).tolist(),
            "b": {f"[{i}]": (joint[i].sum(axis=1) / joint[i].sum()).tolist() for i in range(2)},
            "c": {f"[np.int64({j}), np.int64({i})]": (joint[i, j] / joint[i, j].sum()).tolist()
                  for i in range(2) for j in range(3)}}
    assert np.allclose(_bn_table(net, cond, (2, 3, 2), ("a", "b", "c")), joint)
    del cond["c"]["[np.int64(2), np.int64(1)]"]          # a parent configuration the package left out: uniform
    assert np.allclose(_bn_table(net, cond, (2, 3, 2), ("a", "b", "c"))[1, 2], joint[1, 2].sum() / 2)
    # the root is the last variable and the parents are listed in another order than the variables
    net_c = [("a", ["c"]), ("b", ["a", "c"])]
    cond_c = {"c": joint.sum(axis=(0, 1)).tolist(),
              "a": {f"[{k}]": (joint[:, :, k].sum(axis=1) / joint[:, :, k].sum()).tolist() for k in range(2)},
              "b": {f"[{i}, {k}]": (joint[i, :, k] / joint[i, :, k].sum()).tolist() for i in range(2) for k in range(2)}}
    assert np.allclose(_bn_table(net_c, cond_c, (2, 3, 2), ("a", "b", "c")), joint)


@needs_pgm
def test_pgm_reproduces_exact_margins_and_is_deterministic():
    x = _records()
    pairs = all_pairs(4)
    rel = release_margins(x, pairs, eps=np.inf)
    est = pgm_fit(rel, iters=300)
    for m, c in zip(pairs, rel.counts):
        np.testing.assert_allclose(est.margin(m), c / len(x), atol=2e-4)
    assert np.array_equal(pgm_fit(rel, iters=300).table, est.table)
    big = pgm_fit(release_margins(x, pairs, eps=1e6, rng=1, secure=False), iters=300)   # very large finite eps
    assert max(np.abs(big.margin(m) - c / len(x)).max() for m, c in zip(pairs, rel.counts)) < 1e-3
    noisy = pgm_fit(release_margins(x, pairs, eps=0.05, rng=1, secure=False), iters=300)
    assert max(np.abs(noisy.margin(m) - c / len(x)).max() for m, c in zip(pairs, rel.counts)) > 1e-3


@needs_pgm
def test_pgm_bad_input():
    with pytest.raises(TypeError, match="MarginRelease"):
        pgm_fit(_records())
    with pytest.raises(ValueError, match="iters"):
        pgm_fit(release_margins(_records(), [(0, 1)], eps=np.inf), iters=0)


@needs_ds
def test_privbayes_reproduces_the_table_at_huge_eps():
    x = _records(p=3)
    est = privbayes_fit(x, 1e7, rng=1)                   # degree 2 on 3 variables: the network is the joint
    np.testing.assert_allclose(est.table, _table(x, (2, 2, 2)), atol=1e-4)
    x5 = _records(p=5, seed=3)
    est5 = privbayes_fit(x5, 1e7, rng=2)      # 5 variables: each child's conditional given its parents is the data's
    pos = {f"x{j}": j for j in range(5)}
    for child, parents in est5.details["network"]:
        fam, par = tuple(pos[v] for v in parents + [child]), tuple(pos[v] for v in parents)
        true_cond = margin_counts(x5, [fam])[0].reshape(-1, 2) / margin_counts(x5, [par])[0][:, None]
        est_cond = est5.margin(fam).reshape(-1, 2) / est5.margin(par)[:, None]
        np.testing.assert_allclose(est_cond, true_cond, atol=1e-4)
    root = pos[est5.details["network"][0][1][0]]
    np.testing.assert_allclose(est5.margin((root,)), margin_counts(x5, [(root,)])[0] / len(x5), atol=1e-4)
    noisy = privbayes_fit(x5, 0.02, rng=2)
    assert np.abs(noisy.table - _table(x5, (2,) * 5)).max() > 1e-3


@needs_ds
def test_privbayes_seeding_restores_global_state_and_budget():
    x = _records(800)
    np.random.seed(123)  # noqa: NPY002 (the peer's global state)
    random.seed(123)
    before_np, before_py = np.random.get_state()[1].copy(), random.getstate()  # noqa: NPY002 (the peer's global state)
    a = privbayes_fit(x, 1.0, rng=7)
    assert np.array_equal(np.random.get_state()[1], before_np) and random.getstate() == before_py  # noqa: NPY002 (the peer's global state)
    assert np.array_equal(privbayes_fit(x, 1.0, rng=7).table, a.table)
    assert not np.array_equal(privbayes_fit(x, 1.0, rng=8).table, a.table)
    assert a.details["epsilon_argument"] == pytest.approx(2 / 3)
    assert sum(a.details["budget"].values()) == pytest.approx(1.0)
    assert len(a.details["network"]) == 3 and max(len(p) for _, p in a.details["network"]) == 2


@needs_ds
def test_privbayes_keeps_levels_absent_from_the_data():
    x = _records(600, p=3)
    est = privbayes_fit(x, 1e7, levels=(2, 3, 2), rng=1)
    assert est.table.shape == (2, 3, 2) and np.allclose(est.table[:, 2, :], 0, atol=1e-6)


def test_privbayes_bad_input():
    x = _records(300)
    cases = [((x, 0.0), {}, "eps"), ((x, np.inf), {}, "eps"), ((x[:, :1], 1.0), {}, "2 columns"),
             ((x, 1.0), {"degree": 4}, "degree"), ((x, 1.0), {"degree": 0}, "degree"),
             ((x - 1, 1.0), {}, "records"), ((x.astype(float), 1.0), {}, "records"),
             ((x, 1.0), {"names": ("a", "a", "b", "c")}, "names"), ((x, 1.0), {"levels": (2, 2)}, "levels")]
    for args, kwargs, word in cases:
        with pytest.raises((ValueError, TypeError), match=word):
            privbayes_fit(*args, **kwargs)


def test_latent_class_estimate_and_errors():
    x = _records(2000)
    rel = release_margins(x, all_pairs(4), eps=np.inf)
    est = latent_class_estimate(rel, k=2, n_iter=300, n_warmup=300, rng=1, max_draws=50)
    truth = _table(x, (2,) * 4)
    err = estimate_errors(est, truth)
    assert est.has_intervals and est.details["draws_in_mean"] == 50
    assert err["margin_max"] < 0.01 and 0 <= err["coverage"] <= 1 and err["length"] > 0
    uniform = PeerEstimate("u", 1.0, (2,) * 4, np.full((2,) * 4, 1 / 16))
    assert estimate_errors(uniform, truth)["full_tv"] > err["full_tv"]       # the score can tell them apart
    assert "coverage" not in estimate_errors(uniform, truth)
    for bad_truth in (truth[:1], np.ones((2,) * 4)):     # the wrong shape; not summing to 1
        with pytest.raises(ValueError, match="truth"):
            estimate_errors(est, bad_truth)
    with pytest.raises(TypeError, match="MarginRelease"):
        latent_class_estimate(x)


def test_latent_class_mean_is_the_mean_of_the_per_draw_tables():
    from dplit.latent_class import latent_params, table_probs

    x = _records(1500)
    est = latent_class_estimate(release_margins(x, all_pairs(4), eps=np.inf), k=2, n_iter=200, n_warmup=200, rng=2,
                                max_draws=120)
    pi, Psi, _ = latent_params(est.details["fit"])
    pi, Psi = pi.reshape(-1, 2), Psi.reshape(-1, 2, 4, 2)
    kept = np.unique(np.linspace(0, pi.shape[0] - 1, 120).astype(int))
    per_draw = np.mean([table_probs(pi[i] / pi[i].sum(), Psi[i], (2,) * 4) for i in kept], axis=0)
    assert est.details["draws_in_mean"] == kept.size
    np.testing.assert_allclose(est.table, per_draw, rtol=0, atol=1e-12)
    assert all_pairs(3) == [(0, 1), (0, 2), (1, 2)]


def test_compare_methods_runs_what_is_installed():
    x = _records(1500)
    out = compare_methods(x, 2.0, k=2, n_iter=200, n_warmup=200, pgm_iters=100, rng=3)
    assert set(out["estimates"]) | set(out["skipped"]) == {"latent_class", "pgm", "privbayes"}
    assert "latent_class" in out["estimates"] and out["release"].margins == tuple(itertools.combinations(range(4), 2))
    assert all(r["seconds"] >= 0 and 0 <= r["full_tv"] <= 1 for r in out["errors"])
    for bad in ((), ("lcm",)):
        with pytest.raises(ValueError, match="methods"):
            compare_methods(x, 1.0, methods=bad)
