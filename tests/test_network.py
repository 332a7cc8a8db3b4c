"""MLP topology, Proben1 notation, parameters, persistence and input checks."""
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import _reference as ref
# (_engine: the activation buffer's layout, which the kernels rely on)
from fastnet import MLP, _engine, count_connections

# Proben1 Table 7 (SPEC §5.4): (problem, inputs, outputs, [spec, C] for permutations 1, 2, 3).
TABLE7 = {
    "building": (14, 3, [("16+0 l", 333), ("16+8 l", 605), ("16+8 s", 605)]),
    "cancer": (9, 2, [("4+2 l", 100), ("8+4 l", 196), ("16+8 l", 436)]),
    "card": (51, 2, [("32+0 l", 1832), ("24+0 l", 1400), ("16+8 l", 1528)]),
    "diabetes": (8, 2, [("32+0 l", 370), ("16+8 l", 410), ("32+0 l", 370)]),
    "flare": (24, 3, [("32+0 s", 971), ("32+0 s", 971), ("24+0 s", 747)]),
    "gene": (120, 3, [("4+2 l", 1115), ("4+2 s", 1115), ("4+2 s", 1115)]),
    "glass": (9, 6, [("16+8 l", 572)] * 3),
    "heart": (35, 2, [("32+0 l", 1288)] * 3),
    "hearta": (35, 1, [("32+0 l", 1220), ("16+0 l", 628), ("32+0 l", 1220)]),
    "heartac": (35, 1, [("2+0 l", 110), ("8+4 l", 512), ("16+8 s", 1052)]),
    "heartc": (35, 2, [("16+8 l", 1112), ("8+8 l", 744), ("32+0 l", 1288)]),
    "horse": (58, 3, [("16+8 l", 1793), ("16+8 l", 1793), ("32+0 l", 2161)]),
    "soybean": (82, 19, [("16+8 l", 4153), ("32+0 l", 4841), ("16+0 l", 3209)]),
    "thyroid": (21, 3, [("16+8 l", 794), ("8+4 l", 398), ("16+8 l", 794)]),
}
PIVOTS = [(p, k + 1, n_in, n_out, spec, c)
          for p, (n_in, n_out, rows) in TABLE7.items() for k, (spec, c) in enumerate(rows)]


def test_table7_has_42_pivots():
    assert len(PIVOTS) == 42


@pytest.mark.parametrize("problem,perm,n_in,n_out,spec,C", PIVOTS)
def test_connection_counts_equal_proben1_table7(problem, perm, n_in, n_out, spec, C):
    net = MLP.from_proben1(spec, n_in, n_out)
    assert net.n_connections == C
    assert net.proben1_spec == spec
    assert count_connections(net.layer_sizes, shortcut=True) == C


def test_cancer_connection_count_by_hand():
    # 9*4 + 9*2 + 9*2 + 4*2 + 4*2 + 2*2 + (4+2+2) = 100
    assert MLP(9, (4, 2), 2).n_connections == 100
    assert MLP(9, (4, 2), 2, shortcut=False).n_connections == 10 * 4 + 5 * 2 + 3 * 2
    assert MLP(2, (3,), 4, shortcut=False).n_connections == 25


def test_proben1_notation_round_trips():
    for spec in ["4+2 l", "16+0 s", "32+0 l", "0+0 l", "16+8 s"]:
        assert MLP.from_proben1(spec, 5, 2).proben1_spec == spec
    net = MLP.from_proben1("16+0 s", 5, 2)
    assert net.hidden == (16,) and net.output_activation == "proben1"
    assert net.hidden_activation == "proben1"
    assert MLP.from_proben1("4+2 l", 5, 2, shortcut=False).shortcut is False
    assert MLP.from_proben1("linear", 5, 2).hidden == ()
    assert MLP(3, (2, 2, 2), 1).proben1_spec is None
    assert MLP(3, (2,), 1, hidden_activation="tanh").proben1_spec is None


@pytest.mark.parametrize("spec", ["4+2", "4+2 x", "a+b l", "0+3 l", "", "4+2+1 l"])
def test_bad_proben1_spec(spec):
    with pytest.raises(ValueError, match="`spec`"):
        MLP.from_proben1(spec, 3, 2)


def test_repr_speaks_proben1():
    r = repr(MLP.from_proben1("4+2 l", 9, 2))
    assert "9 inputs" in r and "4+2 hidden" in r and "2 linear outputs" in r
    assert "all shortcut connections" in r and "100 connections" in r and "'4+2 l'" in r


@pytest.mark.parametrize("shortcut", [True, False])
def test_get_set_params_round_trip_and_shapes(shortcut):
    net = MLP(3, (4, 2), 2, shortcut=shortcut).init_weights(0)
    W, b = net.get_params()
    expected_pairs = ([(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)] if shortcut
                      else [(0, 1), (1, 2), (2, 3)])
    assert sorted(W) == sorted(expected_pairs)
    for (i, j), Wij in W.items():
        assert Wij.shape == (net.layer_sizes[i], net.layer_sizes[j])
    assert {j: v.shape for j, v in b.items()} == {1: (4,), 2: (2,), 3: (2,)}
    other = MLP(3, (4, 2), 2, shortcut=shortcut).set_params(W, b)
    assert np.array_equal(other.weights, net.weights)
    assert sum(v.size for v in W.values()) + sum(v.size for v in b.values()) == net.n_connections


def test_set_params_errors():
    net = MLP(3, (4,), 2)
    W, b = net.get_params()
    with pytest.raises(ValueError, match="exactly the keys"):
        net.set_params({k: v for k, v in list(W.items())[:-1]}, b)
    with pytest.raises(ValueError, match=r"must have shape \(3, 4\)"):
        net.set_params({**W, (0, 1): np.zeros((4, 3))}, b)
    with pytest.raises(ValueError, match="finite"):
        net.set_params({**W, (0, 1): np.full((3, 4), np.nan)}, b)
    with pytest.raises(TypeError):
        net.set_params([], b)
    with pytest.raises(TypeError, match=r"^`W\[\(0, 1\)\]` must be real, got dtype complex128"):
        net.set_params({**W, (0, 1): W[(0, 1)] + 1e-3j}, b)
    with pytest.raises(TypeError, match=r"^`b\[1\]` must be real, got dtype complex128"):
        net.set_params(W, {**b, 1: b[1] + 1e-3j})


def test_init_weights_uniform_and_reproducible():
    a = MLP(10, (20,), 5).init_weights(42, scale=0.3)
    b = MLP(10, (20,), 5).init_weights(np.random.default_rng(42), scale=0.3)
    assert np.array_equal(a.weights, b.weights)
    assert np.abs(a.weights).max() <= 0.3 and a.weights.std() > 0.1
    assert not np.array_equal(a.weights, MLP(10, (20,), 5).init_weights(43, scale=0.3).weights)


def test_weights_view_is_read_only():
    net = MLP(2, (2,), 1)
    with pytest.raises(ValueError):
        net.weights[0] = 1.0


def test_copy_is_independent():
    net = MLP(2, (2,), 1).init_weights(0)
    c = net.copy()
    c.init_weights(1)
    assert not np.array_equal(c.weights, net.weights)
    assert c == c.copy() and c != net


def test_predict_matches_reference_and_empty_input():
    net = MLP(3, (4, 2), 2).init_weights(0)
    X = np.random.default_rng(0).normal(size=(10, 3))
    assert_allclose(net.predict(X), ref.predict(net, X), rtol=1e-12)
    assert net.predict(np.zeros((0, 3))).shape == (0, 2)


def test_save_load_round_trip_exactly(tmp_path):
    net = MLP(3, (4, 2), 2, shortcut=False, hidden_activation="tanh",
              output_activation="logistic").init_weights(5)
    path = tmp_path / "net.npz"
    net.save(path)
    back = MLP.load(path)
    assert back == net and np.array_equal(back.weights, net.weights)
    assert pickle.loads(pickle.dumps(net)) == net


def test_load_bad_files(tmp_path):
    net = MLP(3, (2,), 1).init_weights(0)
    path = tmp_path / "net.npz"
    net.save(path)
    raw = path.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="cannot read fastnet network file"):
        MLP.load(tmp_path / "trunc.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="not a fastnet network file"):
        MLP.load(tmp_path / "other.npz")
    np.savez(tmp_path / "v99.npz", format_version=np.array(99), config=np.array("{}"),
             weights=np.zeros(3))
    with pytest.raises(ValueError, match="format version 99"):
        MLP.load(tmp_path / "v99.npz")
    with pytest.raises(FileNotFoundError):
        MLP.load(tmp_path / "missing.npz")
    state = net.__getstate__()
    state["format_version"] = 0
    with pytest.raises(ValueError, match="format version 0"):
        MLP.__new__(MLP).__setstate__(state)
    state = net.__getstate__()
    del state["config"]
    with pytest.raises(ValueError, match=r"lacks \['config'\]"):
        MLP.__new__(MLP).__setstate__(state)
    state = net.__getstate__()
    state["weights"] = state["weights"] + 1e-9
    with pytest.raises(ValueError, match="corrupted"):
        MLP.__new__(MLP).__setstate__(state)


@pytest.mark.parametrize("args,kwargs,exc,match", [
    ((0, (), 1), {}, ValueError, "`n_in` must be >= 1"),
    ((2, (0,), 1), {}, ValueError, "`hidden` must be >= 1"),
    ((2, (2,), 0), {}, ValueError, "`n_out`"),
    ((2.5, (), 1), {}, TypeError, "`n_in` must be an integer"),
    ((2, "ab", 1), {}, TypeError, "`hidden`"),
    ((2, (), 1), {"hidden_activation": "softplus"}, ValueError, "`hidden_activation` must be one of"),
    ((2, (), 1), {"output_activation": 3}, TypeError, "`output_activation`"),
    ((2, (), 1), {"shortcut": "yes"}, TypeError, "`shortcut`"),
    ((2, (), 1), {"dtype": np.float16}, ValueError, "`dtype` must be float64 or float32"),
    ((2, (), 1), {"dtype": "int8"}, ValueError, r"`dtype` must be float64 or float32 .*got 'int8'"),
    ((2, (), 1), {"dtype": "no such type"}, ValueError, "`dtype` must be float64 or float32"),
    ((2, (), 1), {"dtype": None}, ValueError, "`dtype` must be float64 or float32.*got None"),
])
def test_constructor_errors(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        MLP(*args, **kwargs)


def test_predict_errors():
    net = MLP(3, (2,), 1)
    with pytest.raises(ValueError, match="`X` has 2 inputs but the network has 3"):
        net.predict(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="finite"):
        net.predict(np.full((1, 3), np.inf))
    with pytest.raises(ValueError, match="2-D"):
        net.predict(np.zeros(3))
    with pytest.raises(ValueError, match="`w` must have shape"):
        net.set_weights(np.zeros(2))


def test_layer_table_is_a_read_only_view_of_the_layout():
    net = MLP(9, (4, 2), 2)
    t = net.layer_table
    # rows: (start, size, src_lo, src_hi, w_off, b_off, activation code)
    assert t.tolist() == [[9, 4, 0, 9, 0, 36, 1], [13, 2, 0, 13, 40, 66, 1],
                          [15, 2, 0, 15, 68, 98, 0]]
    assert t[-1, 5] + t[-1, 1] == net.n_connections
    with pytest.raises(ValueError):
        t[0, 0] = 1


@pytest.mark.parametrize("n_in,hidden,n_out", [(1, (), 1), (9, (4, 2), 2), (125, (), 2), (8, (), 8)])
def test_workspace_rows_start_on_cache_lines(n_in, hidden, n_out):
    # The AVX-512 kernels rely on aligned rows for speed (not for correctness).
    net = MLP(n_in, hidden, n_out)
    X = np.random.default_rng(0).uniform(size=(5, n_in))
    A = _engine.activations(net, X)
    assert A.shape == (5, -(-net.n_units // 8) * 8)
    assert A.ctypes.data % 64 == 0 and A.strides[0] % 64 == 0 and A.flags.c_contiguous
    assert_array_equal(A[:, :n_in], X)
    assert (A[:, net.n_units:] == 0).all()


# ----------------------------------------- huge, negative-zero and overflowing arguments

@pytest.mark.parametrize("args, message", [
    ((2, 10**400, 2), r"`n_in`, `hidden` and `n_out` must give at most MAX_CONNECTIONS = "
                      r"100000000 connections, got an integer of about 400 digits"),
    ((10**5, (10**4,), 1), r"MAX_CONNECTIONS = 100000000 connections, got 1000120001\."),
    ((-10**5000,), r"`n_in` must be >= 1, got an integer of about 5000 digits"),
])
def test_networks_too_large_to_hold_are_refused_by_name(args, message):
    with pytest.raises(ValueError, match=message):
        MLP(*args)


def test_a_negative_zero_init_scale_draws_zeros():
    net = MLP(2, (3,), 1, init_scale=-0.0, seed=0)
    assert np.array_equal(net.weights, np.zeros(15))
    assert np.array_equal(MLP(2, (3,), 1).init_weights(0, -0.0).weights, np.zeros(15))
    with pytest.raises(ValueError, match=r"`init_scale` must be in \[0.0, 1e\+100\], got -1e-300"):
        MLP(2, (3,), 1, init_scale=-1e-300)


def test_proben1_spec_with_a_5000_digit_layer_is_a_value_error():
    with pytest.raises(ValueError, match=r"`spec` must have hidden layer sizes below "
                                         r"MAX_CONNECTIONS = 100000000, got sizes of 5000 and 1"):
        MLP.from_proben1("1" * 5000 + "+1 l", 2, 1)


@pytest.mark.parametrize("value", [1e308, -1e151, np.nan, np.inf])
def test_weights_whose_sums_could_overflow_are_refused(value):
    net = MLP(2, (3,), 1, seed=0)
    w = net.weights.copy()
    w[7] = value
    with pytest.raises(ValueError, match=r"`w` must be finite with magnitude at most MAX_WEIGHT "
                                         r"= 1e\+150, got .* at index 7"):
        net.set_weights(w)
    W, b = net.get_params()
    b[1][0] = value
    with pytest.raises(ValueError, match=r"`W` and `b` must be finite with magnitude at most"):
        net.set_params(W, b)


def test_the_largest_weights_allowed_give_finite_outputs_for_the_largest_inputs():
    from fastnet.network import MAX_WEIGHT

    for act in ("proben1", "logistic", "tanh"):
        net = MLP(3, (4,), 2, hidden_activation=act, output_activation="linear")
        net.set_weights(np.full(net.n_connections, MAX_WEIGHT))
        Y = net.predict(np.full((2, 3), 1e150) * [[1], [-1]])
        assert np.isfinite(Y).all()


def test_set_weights_names_what_it_cannot_convert():
    with pytest.raises(TypeError, match=r"`w` must be an array of numbers, got str"):
        MLP(2, (3,), 1).set_weights("abc")
    with pytest.raises(TypeError, match=r"^`w` must be real, got dtype complex128\.$"):
        MLP(2, (3,), 1).set_weights(np.ones(15) + 1e-3j)   # (NumPy's cast would only warn)


def test_from_proben1_takes_the_weight_keywords_of_mlp():
    # (issue 46, item 19: MLP.from_proben1(..., seed=1) was a TypeError)
    net = MLP.from_proben1("4+2 l", 9, 2, seed=1)
    same = MLP(9, (4, 2), 2, hidden_activation="proben1", output_activation="linear", seed=1)
    assert np.array_equal(net.weights, same.weights)
    assert np.array_equal(MLP.from_proben1("4+2 l", 9, 2, seed=1).weights, net.weights)
    for kw in ({"init_scale": 0.1}, {"init": "glorot"}, {"init": "fan_in", "init_scale": 1.0}):
        assert np.array_equal(MLP.from_proben1("4+2 s", 9, 2, shortcut=False, seed=3, **kw).weights,
                              MLP(9, (4, 2), 2, shortcut=False, output_activation="proben1", seed=3,
                                  **kw).weights)
    assert np.abs(MLP.from_proben1("4+0 l", 9, 2, seed=0, init_scale=0.1).weights).max() <= 0.1
    with pytest.raises(ValueError, match="`dtype` must be float64 or float32"):
        MLP.from_proben1("4+0 l", 9, 2, dtype=np.complex128)
    assert MLP.from_proben1("4+0 l", 9, 2, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_narrow_float_data_is_converted_with_a_warning(dtype):
    # (issue 46, item 19: float32 data was converted to float64 without a word)
    import warnings

    from fastnet import train

    net = MLP(3, (2,), 1, seed=0)
    X = np.random.default_rng(0).normal(size=(8, 3))
    Y = X[:, :1] ** 2
    expected = net.predict(X.astype(dtype).astype(np.float64))
    with pytest.warns(UserWarning, match=rf"^`X` has dtype {np.dtype(dtype)}: the network computes in "
                                         r"float64, so it is converted to float64") as got:
        y = net.predict(X.astype(dtype))
    assert np.array_equal(y, expected) and len(got) == 1
    assert got[0].filename == __file__              # shown at the caller's line (once per line)
    with pytest.warns(UserWarning, match=r"`Y` has dtype") as got:
        train(net.copy(), X, Y.astype(dtype), max_epochs=2)
    assert got[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net.predict(X)                               # float64 and integers: no word
        net.predict(np.ones((2, 3), dtype=np.int64))
