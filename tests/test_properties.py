"""Property-based tests (issue 32, item 7): releases, their JSON, the mechanisms' shapes and dtypes,
``dirichlet_mle`` and the argument checks of ``dplit._validate``.

Unlike tests/test_fuzz.py (derandomised, no database: the same examples every run), these tests let
hypothesis vary its examples from run to run and keep its example database (``.hypothesis/``, ignored by
git), so every CI run tries new inputs and replays the ones that failed before. Each test has a small
example budget; the file runs in about 10 s on one core (``DPLIT_PROPERTIES_SCALE=10`` multiplies the budgets
for a longer hunt by hand).
"""

import json
import math
import os
import string
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import special

from dplit import _validate as V
from dplit.dirichlet import censored_stat, dirichlet_mle, in_stat_range, logx_mean, sufficient_stat
from dplit.dirichlet_mechanism import dirichlet_mechanism
from dplit.mechanisms import (
    geometric_mechanism,
    laplace_mechanism,
    randomized_response,
    sample_discrete_gaussian,
    sample_two_sided_geometric,
)
from dplit.release import (
    Release,
    laplace_scale,
    noisy_censoring_rates,
    release,
    select_threshold,
)

SCALE = float(os.environ.get("DPLIT_PROPERTIES_SCALE", "1"))   # e.g. 10 for a longer hunt by hand


def budget(n):
    """Settings of one property test: n examples (times SCALE), varying between runs (no derandomize, database kept)."""
    return settings(max_examples=max(1, round(n * SCALE)), deadline=None, suppress_health_check=[HealthCheck.too_slow])


seeds = st.integers(0, 2**32 - 1)
names_of = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=8)


# ---------------------------------------------------------------- releases
@st.composite
def release_inputs(draw):
    """Arguments of :func:`release`: compositions (zeros included), budgets, candidates below 1/d, a split."""
    d = draw(st.integers(2, 5))
    n = draw(st.integers(2, 200))
    alpha = draw(arrays(float, d, elements=st.floats(0.05, 20.0)))
    X = np.random.default_rng(draw(seeds)).dirichlet(alpha, size=n)
    if draw(st.booleans()):                    # a record on a vertex: exact zeros
        X[draw(st.integers(0, n - 1))] = np.eye(d)[draw(st.integers(0, d - 1))]
    cands = draw(st.lists(st.floats(1e-9, 0.99 / d), min_size=1, max_size=6, unique=True))
    kwargs = dict(eps1=draw(st.floats(1e-3, 1e3)), eps2=draw(st.floats(1e-3, 1e3)), candidates=cands,
                  tc=draw(st.floats(1e-3, 0.999)))
    n1 = draw(st.integers(0, n - 1))
    names = draw(st.none() | st.lists(st.text(min_size=1, max_size=6).filter(str.strip), min_size=d, max_size=d,
                                      unique_by=str.strip))
    return X, kwargs, n1, names, draw(seeds)


def _release(inputs):
    X, kw, n1, names, seed = inputs
    return release(X, eps1=kw["eps1"], eps2=kw["eps2"], candidates=kw["candidates"], tc=kw["tc"], n1=n1, rng=seed, secure=False,
                   names=names)


@budget(80)
@given(release_inputs())
def test_a_release_is_consistent_with_its_inputs_and_rule(inputs):
    X, kw, n1, names, _ = inputs
    r = _release(inputs)
    n, d = X.shape
    assert isinstance(r, Release) and r.checked
    assert (r.n, r.n1, r.n2, r.d) == (n, n1, n - n1, d) and r.split == (n1 > 0)
    assert (r.eps1, r.eps2, r.eps_total) == (kw["eps1"], kw["eps2"], kw["eps1"] + kw["eps2"])
    assert np.array_equal(r.candidates, np.sort(kw["candidates"])) and r.a in r.candidates
    assert r.s_G.dtype == np.int64 and r.s_G.shape == (len(kw["candidates"]) + 1,) and np.all(r.s_G >= 0)
    assert np.array_equal(r.p_hat_G, noisy_censoring_rates(r.s_G))
    assert np.all(np.diff(r.p_hat_G) >= 0) and np.all((r.p_hat_G >= 0) & (r.p_hat_G <= 1))
    assert r.a == select_threshold(r.p_hat_G, r.candidates, kw["tc"])
    assert r.fallback == bool(r.p_hat_G[0] > kw["tc"])
    assert r.scale == pytest.approx(laplace_scale(d, r.a, n - n1, kw["eps1"]), rel=1e-12)
    assert r.s_L.shape == (d,) and np.all(np.isfinite(r.s_L)) and not r.s_L.flags.writeable
    s_part, n_part, scale_part = r.part("D2")
    assert s_part is r.s_L and (n_part, scale_part) == (r.n2, r.scale)
    if n1:
        assert r.s_L1.shape == (d,) and r.scale1 == pytest.approx(laplace_scale(d, r.a, n1, kw["eps1"]), rel=1e-12)
        assert r.part("D1")[0] is r.s_L1 and r.part("D1")[1:] == (n1, r.scale1)
    else:
        assert r.s_L1 is None and r.scale1 is None and r.part("D")[1:] == (n, r.scale)
    assert r.names == (None if names is None else tuple(v.strip() for v in names))
    assert r == _release(inputs)                          # the seed fixes everything
    assert "budget" in r.summary()


@budget(80)
@given(release_inputs(), st.sampled_from([None, 0, 2]))
def test_json_round_trips_are_exact(inputs, indent):
    r = _release(inputs)
    text = r.to_json(indent=indent)
    assert Release.from_json(text) == r
    data = json.loads(text)
    assert Release.from_dict(data) == r and Release.from_dict(r.to_dict()) == r
    assert Release.from_json(Release.from_json(text).to_json(indent=indent)).to_json(indent=indent) == text
    with tempfile.TemporaryDirectory() as tmp:
        path = r.save(os.path.join(tmp, "r.json"))
        assert Release.load(path) == r
    # the statistic alone, wrapped by from_statistic at the same threshold, round-trips too
    s = Release.from_statistic(r.s_L, r.n, r.a, r.eps1, s_L1=r.s_L1, n1=r.n1, names=r.names)
    assert Release.from_json(s.to_json()) == s and s.scale == r.scale


@budget(80)
@given(release_inputs(), st.data())
def test_a_tampered_json_is_refused_or_read_as_written(inputs, data):
    """Changing one field of the JSON gives a ValueError/TypeError, or a release that reads as written."""
    r = _release(inputs)
    d = r.to_dict()
    field = data.draw(st.sampled_from(sorted(k for k in d if k != "format")))
    value = d[field]
    if isinstance(value, list) and value and isinstance(value[0], str):
        new = value[::-1]
    elif isinstance(value, list) and value:
        i = data.draw(st.integers(0, len(value) - 1))
        new = list(value)
        new[i] = data.draw(st.sampled_from([0, -1, 1.5, 1e9, None, "x", value[i] + 1, value[i] * 0.999]))
    else:
        new = data.draw(st.sampled_from([0, -1, 0.5, 1.5, 1e9, None, "x", [], True]))
    assume(new != value)
    tampered = d | {field: new}
    try:
        back = Release.from_dict(tampered)
    except (ValueError, TypeError) as err:
        assert str(err)
        return
    assert back.to_dict() == tampered and back != r
    assert Release.from_json(back.to_json()) == back


@budget(60)
@given(st.integers(2, 5), st.integers(2, 500), st.floats(1e-6, 0.3), st.floats(1e-3, 1e3), seeds)
def test_from_statistic_of_a_genuine_noisy_statistic_round_trips(d, n, a, eps1, seed):
    assume(a * d < 1)
    rng = np.random.default_rng(seed)
    X = rng.dirichlet(np.ones(d), size=n)
    s_L = censored_stat(X, a) + rng.laplace(0.0, laplace_scale(d, a, n, eps1), d)
    r = Release.from_statistic(s_L, n, a, eps1)
    assert r.checked and r.eps2 == 0 and r.s_G is None and r.eps_total == eps1
    assert Release.from_json(r.to_json()) == r


# ---------------------------------------------------------------- mechanisms: shapes and dtypes
shapes = st.lists(st.integers(0, 4), max_size=3).map(tuple)


@budget(80)
@given(shapes, st.floats(1e-3, 1e3), st.floats(1e-3, 1e3), seeds, st.booleans(), st.booleans())
def test_laplace_mechanism_keeps_the_shape_and_gives_floats(shape, sens, eps, seed, ints, secure):
    rng = np.random.default_rng(seed)
    value = rng.integers(-1000, 1000, size=shape) if ints else rng.normal(0, 1e3, size=shape)
    out = laplace_mechanism(value, sens, eps, rng=seed, secure=secure)
    assert out.shape == shape and out.dtype == np.float64 and np.all(np.isfinite(out))
    if not secure:
        assert np.array_equal(out, laplace_mechanism(value, sens, eps, rng=seed, secure=False))


@budget(80)
@given(shapes, st.floats(1.0, 100.0), st.floats(1e-2, 1e2), seeds, st.booleans(), st.booleans())  # integer counts: sensitivity >= 1
def test_geometric_mechanism_keeps_the_shape_and_gives_int64(shape, sens, eps, seed, as_float, secure):
    counts = np.random.default_rng(seed).integers(-10**6, 10**6, size=shape)
    out = geometric_mechanism(counts.astype(float) if as_float else counts, sens, eps, rng=seed, secure=secure)
    assert out.shape == shape and out.dtype == np.int64
    if not secure:
        assert np.array_equal(out, geometric_mechanism(counts, sens, eps, rng=seed, secure=False))


@budget(80)
@given(st.one_of(st.integers(0, 50), shapes), st.floats(1e-6, 0.999), st.floats(0.05, 1e3), seeds)
def test_integer_samplers_give_int64_of_the_size_asked(size, t, sigma, seed):
    shape = (size,) if isinstance(size, int) else size
    g = sample_two_sided_geometric(t, size, rng=seed)
    z = sample_discrete_gaussian(sigma, size, rng=seed, secure=False)
    for x in (g, z):
        assert x.shape == shape and x.dtype == np.int64
    assert np.array_equal(g, sample_two_sided_geometric(t, size, rng=seed))
    assert np.array_equal(z, sample_discrete_gaussian(sigma, size, rng=seed, secure=False))


@budget(80)
@given(shapes, st.floats(0.0, 0.999), seeds, st.booleans())
def test_randomized_response_gives_binary_int64_of_the_same_shape(shape, p_keep, seed, as_bool):
    x = np.random.default_rng(seed).integers(0, 2, size=shape)
    out = randomized_response(x.astype(bool) if as_bool else x, p_keep=p_keep, rng=seed)
    assert out.shape == shape and out.dtype == np.int64 and np.all((out == 0) | (out == 1))


@budget(80)
@given(st.integers(0, 4), st.integers(2, 6), st.floats(1e-3, 1e3), st.floats(1.01, 100.0), seeds)
def test_dirichlet_mechanism_gives_points_of_the_simplex_of_the_same_shape(m, d, eps, lam, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 1000, size=(m, d) if m else d)
    y = dirichlet_mechanism(counts, eps, lam, rng=seed)
    assert y.shape == counts.shape and y.dtype == np.float64
    assert np.all((y >= 0) & (y <= 1)) and np.allclose(y.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert np.array_equal(y, dirichlet_mechanism(counts, eps, lam, rng=seed))


# ---------------------------------------------------------------- dirichlet_mle
alphas = st.integers(2, 6).flatmap(
    lambda d: arrays(float, d, elements=st.floats(math.log(0.02), math.log(5e3)).map(math.exp)))


@budget(150)
@given(alphas)
def test_mle_of_the_expected_statistic_is_the_parameter(alpha):
    """E[log x] under Dirichlet(alpha) is a statistic whose MLE is alpha itself (the model is identifiable)."""
    s = logx_mean(alpha)
    assert in_stat_range(s)
    np.testing.assert_allclose(dirichlet_mle(s), alpha, rtol=1e-6)


@budget(90)
@given(st.integers(2, 6).flatmap(lambda d: arrays(float, d, elements=st.floats(math.log(0.2), math.log(1e3))
                                                  .map(math.exp))),
       st.integers(2, 400), seeds, st.randoms(use_true_random=False))
def test_mle_of_a_sample_solves_the_score_equation_and_permutes(alpha, n, seed, rnd):
    X = np.random.default_rng(seed).dirichlet(alpha, size=n)
    assume(np.all(X > 0))
    s = sufficient_stat(X)
    assume(in_stat_range(s))                  # Jensen: it is, unless every record is the same
    a, info = dirichlet_mle(s, return_info=True)
    assert info.converged and np.all(np.isfinite(a)) and np.all(a > 0)
    assert info.concentration == pytest.approx(a.sum(), rel=1e-12)
    score = special.digamma(a.sum()) - special.digamma(a) + s
    assert np.max(np.abs(score)) <= 1e-6 * max(1.0, np.max(np.abs(s)))
    perm = np.array(rnd.sample(range(s.size), s.size))
    np.testing.assert_allclose(dirichlet_mle(s[perm]), a[perm], rtol=1e-6)


@budget(90)
@given(st.integers(2, 6).flatmap(lambda d: arrays(float, d, elements=st.floats(-50.0, 1.0))))
def test_mle_outside_the_range_is_refused(s):
    if in_stat_range(s):
        assert np.all(dirichlet_mle(s) > 0)
    else:
        assert np.logaddexp.reduce(s) >= -1e-12
        with pytest.raises(ValueError, match="outside Range"):
            dirichlet_mle(s)


# ---------------------------------------------------------------- dplit._validate
reals = st.floats(allow_nan=True, allow_infinity=True)


def _refused(kind, fn, value, name, *args, **kwargs):
    """``fn(value, name, ...)`` raises ``kind`` with a message that starts with the argument's name."""
    with pytest.raises(kind) as info:
        fn(value, name, *args, **kwargs)
    assert str(info.value).startswith(f"{name} "), str(info.value)


@budget(100)
@given(reals, names_of)
def test_scalar_checks_against_their_rules(x, name):
    assert V.real(x, name) == x or math.isnan(x)
    if math.isfinite(x):
        assert V.finite(x, name) == x
    else:
        _refused(ValueError, V.finite, x, name)
    if math.isfinite(x) and x > 0:
        assert V.positive(x, name) == x
    else:
        _refused(ValueError, V.positive, x, name)
    for allow_zero in (False, True):
        for allow_inf in (False, True):
            ok = (x >= 0 if allow_zero else x > 0) and (allow_inf or math.isfinite(x))
            if ok:
                assert V.epsilon(x, name, allow_zero=allow_zero, allow_inf=allow_inf) == x
            else:
                _refused(ValueError, V.epsilon, x, name, allow_zero=allow_zero, allow_inf=allow_inf)
    for lo in (False, True):
        for hi in (False, True):
            ok = (x >= 0 if lo else x > 0) and (x <= 1 if hi else x < 1)
            if ok:
                assert V.unit_interval(x, name, closed_low=lo, closed_high=hi) == x
            else:
                _refused(ValueError, V.unit_interval, x, name, closed_low=lo, closed_high=hi)
    for fn in (V.count, V.boolean):
        _refused(TypeError, fn, x, name)


@budget(60)
@given(st.one_of(st.text(max_size=3), st.none(), st.lists(st.floats(), max_size=2), st.booleans(),
                 st.complex_numbers(allow_nan=False).filter(lambda z: z.imag != 0)), names_of)
def test_non_reals_are_type_errors_naming_the_argument(x, name):
    for fn in (V.real, V.finite, V.positive, V.epsilon, V.unit_interval):
        _refused(TypeError, fn, x, name)


@budget(100)
@given(st.integers(-10**20, 10**20), st.integers(-5, 5), names_of, st.booleans())
def test_count_against_its_rule(v, minimum, name, numpy_int):
    if numpy_int:
        v = np.int64(max(min(v, 2**62), -(2**62)))
    if minimum <= v <= 2**63 - 1:
        out = V.count(v, name, minimum)
        assert out == v and type(out) is int
    else:                                   # below the minimum, or past int64 (every kernel's integer)
        _refused(ValueError, V.count, v, name, minimum)
    _refused(TypeError, V.count, float(v), name, minimum)


@budget(60)
@given(st.integers(0, 2**63), st.integers(-(2**40), -1))
def test_rng_seeds_give_the_numpy_stream(seed, negative):
    assert V.rng(seed).random() == np.random.default_rng(seed).random()
    g = np.random.default_rng(seed)
    assert V.rng(g) is g
    with pytest.raises(ValueError, match="^rng must be a non-negative seed"):
        V.rng(negative)
    for bad in (str(seed), True, 1.5):
        with pytest.raises(TypeError, match="^rng must be"):
            V.rng(bad)


small_shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)
real_arrays = st.one_of(
    arrays(st.sampled_from([np.int64, np.int32]), small_shapes, elements=st.integers(-10**6, 10**6)),
    arrays(st.sampled_from([np.float64, np.float32]), small_shapes,
           elements=st.floats(-1e6, 1e6, width=32) | st.floats(0.0, 1.0, width=32)))


@budget(60)
@given(real_arrays, names_of)
def test_array_checks_convert_to_float_and_check_their_rules(arr, name):
    out = V.real_array(arr, name)
    assert out.dtype == np.float64 and out.shape == arr.shape and np.array_equal(out, arr.astype(float))
    assert np.array_equal(V.finite_array(arr, name, ndim=arr.ndim), out)
    _refused(ValueError, V.real_array, arr, name, ndim=arr.ndim + 1)
    if arr.size:
        bad = out.copy()
        bad.flat[0] = np.nan
        _refused(ValueError, V.finite_array, bad, name)
    inside = bool(np.all((out > 0) & (out < 1)))
    if inside:
        assert np.array_equal(V.unit_interval_array(arr, name), out)
    else:
        _refused(ValueError, V.unit_interval_array, arr, name)
    _refused(TypeError, V.real_array, arr.astype(bool), name)


@budget(60)
@given(st.integers(1, 10**6), st.integers(0, 10**4), st.integers(1, 8), st.integers(1, 10**6), st.booleans())
def test_run_settings_against_their_rules(n_iter, n_warmup, n_chains, thin, progress):
    if thin <= n_iter:
        assert V.run_settings(n_iter, n_warmup, n_chains, thin, progress) == (
            n_iter, n_warmup, n_chains, thin, progress, None)
    else:
        with pytest.raises(ValueError, match="^thin must be <= n_iter"):
            V.run_settings(n_iter, n_warmup, n_chains, thin, progress)


@budget(60)
@given(st.integers(0, 2**70))
def test_work_size_is_refused_exactly_above_the_limit(nbytes):
    limit = V.max_work_bytes()
    if nbytes <= limit:
        assert V.work_size(nbytes, "what", "change") == nbytes
    else:
        with pytest.raises(ValueError, match="what would need about .* change"):
            V.work_size(nbytes, "what", "change")


@budget(40)
@given(st.lists(names_of, min_size=1, max_size=5, unique=True), st.data())
def test_choice_accepts_exactly_its_options(options, data):
    value = data.draw(st.sampled_from(options) | names_of | st.integers() | st.none())
    if value in options:
        assert V.choice(value, "opt", tuple(options)) == value
    else:
        with pytest.raises(ValueError, match="^opt must be one of"):
            V.choice(value, "opt", tuple(options))
