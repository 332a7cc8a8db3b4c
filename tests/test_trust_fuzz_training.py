"""A bounded fuzzer of the training API, run in a subprocess so that a crash in the
kernels fails this test instead of killing the test run.

Every call must either return a result whose errors and weights are all finite, or
raise ValueError, TypeError or DivergenceError: never NaN in a normal-looking result,
an OverflowError, a MemoryError, a warning other than NoConvergenceWarning, or a crash.
"""
import subprocess
import sys
import textwrap

import pytest

FUZZER = textwrap.dedent('''
    import warnings

    import numpy as np
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from fastnet import (MLP, DivergenceError, NoConvergenceWarning, train, train_backprop,
                         train_many, train_rprop, train_rprop_many)
    from fastnet.algorithms import LBFGS, RPROP, SCG, Adam, Backprop, LevenbergMarquardt, Quickprop
    from fastnet.stopping import GL, UP, AnyOf, Correct, MaxEpochs, ProgressBelow

    ACTS = ["proben1", "logistic", "tanh", "linear"]
    EXTREME = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                        st.sampled_from([0.0, -1.0, 1e-300, 1e300, 10 ** 400, True, "1", None]))


    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def fuzz(data):
        n_in = data.draw(st.integers(1, 6))
        n_out = data.draw(st.integers(1, 3))
        hidden = tuple(data.draw(st.lists(st.integers(1, 6), max_size=3)))
        net = MLP(n_in, hidden, n_out, shortcut=data.draw(st.booleans()),
                  hidden_activation=data.draw(st.sampled_from(ACTS)),
                  output_activation=data.draw(st.sampled_from(ACTS)), seed=1)
        n = data.draw(st.integers(1, 20))
        rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
        scale = data.draw(st.sampled_from([1.0, 1e3, 1e30, 1e150]))
        X = rng.uniform(-scale, scale, (n, n_in))
        T = (rng.uniform(size=(n, n_out)) > 0.5) * 1.0
        trainer = data.draw(st.sampled_from(["rprop", "backprop", "many"]))
        kw = {"max_epochs": data.draw(st.one_of(st.integers(1, 60), st.sampled_from(
            [0, -1, 10 ** 12, 1.5])))}
        if data.draw(st.booleans()):
            kw["strip"] = data.draw(st.one_of(st.integers(1, 7), st.sampled_from([0, 2.5])))
        if data.draw(st.booleans()):
            kw["init_scale"] = data.draw(st.one_of(st.floats(0, 3), EXTREME))
            kw["seed"] = data.draw(st.integers(0, 100))
        if data.draw(st.booleans()):
            kw["target_range"] = data.draw(st.sampled_from(
                [(0.0, 1.0), (-1.0, 1.0), (-1e308, 1e308), (1.0, 1.0), (0, 10 ** 400)]))
        if data.draw(st.booleans()):
            kw["stop"] = data.draw(st.sampled_from(
                [Correct(), MaxEpochs(5), AnyOf(GL(5), ProgressBelow(0.1))]))
            if kw["stop"] is not None and kw["stop"].needs_validation:
                kw["X_val"], kw["Y_val"] = X[: max(1, n // 2)], T[: max(1, n // 2)]
        if trainer == "backprop":
            kw["mode"] = data.draw(st.sampled_from(["batch", "online"]))
            kw["learning_rate"] = data.draw(st.one_of(st.floats(1e-4, 5.0), EXTREME))
            kw["momentum"] = data.draw(st.sampled_from([0.0, 0.5, 0.99, 1.0, -0.1]))
        else:
            kw["variant"] = data.draw(st.sampled_from(["rprop+", "rprop-", "irprop-",
                                                       "irprop+", "adam"]))
            if data.draw(st.booleans()):
                kw["delta0"] = data.draw(st.one_of(st.floats(1e-6, 10.0), EXTREME,
                                                   st.just((0.05, 0.2))))
            if data.draw(st.booleans()):
                kw["delta_max"] = data.draw(st.one_of(st.floats(1e-3, 1e300), EXTREME))
        if kw["max_epochs"] == 10 ** 12:
            # a huge limit is legal, but only a criterion that surely fires ends the run
            kw["stop"] = MaxEpochs(data.draw(st.integers(1, 30)))
            kw.pop("X_val", None), kw.pop("Y_val", None)
        X_val, Y_val = kw.pop("X_val", None), kw.pop("Y_val", None)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", NoConvergenceWarning)
            try:
                if trainer == "rprop":
                    results = [train_rprop(net, X, T, X_val, Y_val, **kw)]
                elif trainer == "backprop":
                    results = [train_backprop(net, X, T, X_val, Y_val, **kw)]
                else:
                    seed = kw.pop("seed", None)
                    nets = [net] + [net.copy() for _ in range(data.draw(st.integers(0, 9)))]
                    results = train_rprop_many(nets, X, T, X_val, Y_val,
                                               seeds=None if seed is None else
                                               [seed + i for i in range(len(nets))], **kw)
            except (ValueError, TypeError, DivergenceError):
                return
        for r in results:
            assert np.isfinite(r.train_error).all(), r
            assert np.isfinite(r.net.weights).all(), r
            assert np.isfinite(r.final_train.squared_error_percentage), r
            if r.val_error is not None:
                assert np.isfinite(r.val_error).all(), r
            assert r.traversals.total >= 0 and r.epochs >= 1


    def outcome(call):
        """("ok", results) or ("diverged", error) of a training call."""
        try:
            return "ok", call()
        except DivergenceError as exc:
            return "diverged", exc


    @settings(max_examples=MAX_LANES_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def fuzz_lanes(data):
        # Every method of train_rprop_many raises where train_rprop raises for a
        # trial, and returns finite outputs and errors where it does not: with
        # saturating units (tanh, logistic), huge inputs and huge initial weights.
        n_in = data.draw(st.integers(1, 4))
        n_out = data.draw(st.integers(1, 3))
        hidden = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=2)))
        net = MLP(n_in, hidden, n_out, shortcut=data.draw(st.booleans()),
                  hidden_activation=data.draw(st.sampled_from(["tanh", "logistic", "proben1"])),
                  output_activation=data.draw(st.sampled_from(ACTS)), seed=1)
        n = data.draw(st.integers(1, 30))
        rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
        X = rng.random((n, n_in)) * data.draw(st.sampled_from([1.0, 1e30, 1e150, 1e300]))
        T = (rng.random((n, n_out)) > 0.5) * 1.0
        K = data.draw(st.integers(1, 10))
        kw = dict(max_epochs=data.draw(st.integers(1, 30)),
                  init_scale=data.draw(st.sampled_from([0.5, 1e10, 1e50, 1e100])),
                  variant=data.draw(st.sampled_from(["rprop+", "irprop-", "irprop+"])))
        if data.draw(st.booleans()):
            kw["stop"], kw["strip"] = Correct(), data.draw(st.integers(1, 3))
        method = data.draw(st.sampled_from(["lanes", "serial", "mixed", "auto"]))
        alone = [outcome(lambda i=i: train_rprop(net.copy(), X, T, seed=i, **kw))
                 for i in range(K)]
        got = outcome(lambda: train_rprop_many([net.copy() for _ in range(K)], X, T,
                                               seeds=range(K), method=method, **kw))
        failing = {i: o[1].epoch for i, o in enumerate(alone) if o[0] == "diverged"}
        if got[0] == "diverged":
            assert got[1].trial in failing, (method, failing, got[1])
            assert got[1].epoch == failing[got[1].trial], (method, failing, got[1])
            return
        assert not failing, (method, failing)
        for r in got[1]:
            assert np.isfinite(r.net.predict(X)).all(), r
            assert np.isfinite(r.train_error).all(), r
            assert np.isfinite(r.final_train.squared_error_percentage), r


    RULES = {
        "rprop": lambda d: RPROP(variant=d.draw(st.sampled_from(["rprop+", "irprop-"])),
                                 delta0=d.draw(st.one_of(st.floats(1e-6, 10),
                                                         st.just((0.05, 0.2))))),
        "backprop": lambda d: Backprop(mode=d.draw(st.sampled_from(["batch", "online"])),
                                       learning_rate=d.draw(st.floats(1e-4, 50.0)),
                                       momentum=d.draw(st.sampled_from([0.0, 0.5, 0.99]))),
        "quickprop": lambda d: Quickprop(epsilon=d.draw(st.floats(1e-6, 10.0)),
                                         mu=d.draw(st.floats(0.1, 10.0))),
        "adam": lambda d: Adam(learning_rate=d.draw(st.floats(1e-5, 10.0)),
                               batch_size=d.draw(st.sampled_from([None, 1, 3]))),
        "scg": lambda d: SCG(sigma=d.draw(st.sampled_from([1e-4, 1e-10, 1.0])),
                             lambda1=d.draw(st.sampled_from([1e-6, 1e-300, 1e6]))),
        "lm": lambda d: LevenbergMarquardt(mu=d.draw(st.sampled_from([1e-3, 1e-300, 1e9]))),
        "lbfgs": lambda d: LBFGS(maxcor=d.draw(st.sampled_from([1, 10]))),
    }


    @settings(max_examples=MAX_RULE_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def fuzz_rules(data):
        # every algorithm, one trial and many (drawn, given weights, a list), on data
        # and weights from 1e-170 to 1e150: a result with finite errors and weights,
        # or ValueError, TypeError or DivergenceError; no other exception or warning
        n_in, n_out = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
        net = MLP(n_in, tuple(data.draw(st.lists(st.integers(1, 5), max_size=2))), n_out,
                  shortcut=data.draw(st.booleans()),
                  hidden_activation=data.draw(st.sampled_from(ACTS + ["relu"])),
                  output_activation=data.draw(st.sampled_from(
                      ACTS + ["softmax"] if n_out > 1 else ACTS)), seed=1)
        n = data.draw(st.integers(1, 16))
        rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
        scale = data.draw(st.sampled_from([1.0, 1e3, 1e30, 1e150, 1e-170]))
        X = rng.uniform(-scale, scale, (n, n_in))
        T = (rng.uniform(size=(n, n_out)) > 0.5) * 1.0
        rule = RULES[data.draw(st.sampled_from(sorted(RULES)))](data)
        kw = dict(max_epochs=data.draw(st.integers(1, 40)),
                  loss=data.draw(st.sampled_from(["sse", "cross_entropy"])),
                  weight_decay=data.draw(st.sampled_from([0.0, 1e-3, 10.0])))
        if data.draw(st.booleans()):
            kw["stop"] = data.draw(st.sampled_from([Correct(), AnyOf(GL(5), ProgressBelow(0.1))]))
            if kw["stop"].needs_validation:
                kw["X_val"], kw["Y_val"] = X[: max(1, n // 2)], T[: max(1, n // 2)]
        init = data.draw(st.sampled_from([None, 0.5, 1e10, 1e100, 1e-170]))
        K = data.draw(st.integers(1, 12))
        form = data.draw(st.sampled_from(["one", "arrays", "weights", "list"]))
        method = data.draw(st.sampled_from(["auto", "serial", "lanes", "mixed"]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", NoConvergenceWarning)
            # (known: a tiny set's SSE of ~1e307 overflows when scaled to percent in
            # the single-network backend, which then raises DivergenceError)
            warnings.filterwarnings("ignore", "overflow encountered in multiply",
                                    RuntimeWarning, r"fastnet\\.training\\._serial")
            try:
                if form == "one":
                    results = [train(net, X, T, algorithm=rule, seed=3, init_scale=init, **kw)]
                elif form == "list":
                    results = train_many([net.copy() for _ in range(K)], X, T, algorithm=rule,
                                         seeds=range(K), init_scale=init, method=method, **kw)
                else:
                    W = np.random.default_rng(K).uniform(-1, 1, (K, net.n_connections))
                    start = (dict(n_trials=K, seed=3, init_scale=init) if form == "arrays"
                             else dict(initial_weights=W * (init or 1.0)))
                    results = train_many(net, X, T, algorithm=rule, method=method, **start,
                                         **kw)
            except (ValueError, TypeError, DivergenceError):
                return
        for r in results:
            assert np.isfinite(r.train_error).all(), r
            assert np.isfinite(r.net.weights).all(), r


    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        fuzz_lanes()
    fuzz()
    fuzz_rules()
    print("fuzzed", MAX_EXAMPLES, "calls")
''')


@pytest.mark.slow  # 17.7 s on a loaded two-core machine (--durations)
def test_training_api_fuzz_in_a_subprocess():
    script = "MAX_EXAMPLES = 1000\nMAX_LANES_EXAMPLES = 300\nMAX_RULE_EXAMPLES = 600\n" + FUZZER
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert "fuzzed 1000 calls" in proc.stdout
