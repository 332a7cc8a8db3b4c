"""A rule is one body and one registration: the kernels' table (``_rules.h``) and the
Python entry (``fastnet.algorithms.rule``) make everything else.

The last test adds a rule the way docs/algorithms.md says, to a copy of the package:
its step and its table line in ``_rules.h`` and one registered class, nothing else;
builds the three kernel modules that read the table; and trains it on one network
and in the vector lanes, against a NumPy reference.
"""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fastnet
from fastnet import algorithms
from fastnet._kernels import _rules
from fastnet.algorithms import ALGORITHMS, Param, parameter_table, rule
from fastnet.training._algorithms import KernelRule
from fastnet.training._registry import REGISTRY

KERNEL_RULES = {"rprop+": "rprop_plus", "rprop-": "rprop_minus", "irprop-": "irprop_minus",
                "irprop+": "irprop_plus", "backprop": "backprop", "quickprop": "quickprop",
                "adam": "adam"}


def test_the_kernels_table_names_every_rule_with_its_record():
    assert _rules.NAMES == list(_rules.RULES)
    assert [e.code for e in _rules.RULES.values()] == list(range(len(_rules.NAMES)))
    for spec, kernel in KERNEL_RULES.items():
        algorithm = algorithms.from_spec(spec)
        assert algorithm.kernel == kernel and algorithm.code == _rules.RULES[kernel].code
        record = algorithm.kernel_rule()
        # the record's fields are the class's parameters of the same names
        assert set(record.params) == set(_rules.RULES[kernel].fields)
        for field, value in record.params.items():
            assert value == float(algorithm.kernel_values()[field])
    assert _rules.RULES["backprop"].states == ("dw_prev",)
    assert _rules.RULES["irprop_minus"].states == ("g_prev", "step")


def test_the_catalogue_and_the_listing_come_from_the_registry():
    assert ALGORITHMS is REGISTRY
    for make in ALGORITHMS.values():
        cls = getattr(make, "func", make)
        assert getattr(algorithms, cls.__name__) is cls and cls.__name__ in algorithms.__all__
    table = parameter_table()
    for name in ALGORITHMS:
        assert f"`{name}`" in table


def test_the_documented_parameter_table_is_the_registrys():
    doc = Path(__file__).resolve().parent.parent / "docs" / "algorithms.md"
    text = doc.read_text(encoding="utf-8")
    start = text.index("<!-- parameter table: fastnet.algorithms.parameter_table() -->\n")
    end = text.index("<!-- end of the parameter table -->", start)
    shown = text[start:end].split("\n", 1)[1]
    assert shown == parameter_table()


def test_ranges_are_checked_from_the_entry_once():
    with pytest.raises(ValueError, match=r"`mu` must be in \(0.0, inf\)"):
        algorithms.from_spec("quickprop(mu=0.0)")
    with pytest.raises(ValueError, match=r"`beta2` must be in \[0.0, 1.0\)"):
        algorithms.from_spec("adam(beta2=1.0)")
    with pytest.raises(TypeError, match="`batch_size` must be an integer"):
        algorithms.Adam(batch_size=2.5)
    assert algorithms.Adam(batch_size=None).batch_size is None


def test_a_registration_refuses_a_name_twice_and_a_missing_field():
    with pytest.raises(ValueError, match="registered already"):
        rule("adam", params=())(type("Again", (KernelRule,), {}))
    with pytest.raises(ValueError, match="no parameters of"):
        rule("adam_without_epsilon", kernel="adam", params=(
            Param("learning_rate", 1e-3, low=0.0, low_open=True),))(
            type("Short", (KernelRule,), {}))
    assert "adam_without_epsilon" not in REGISTRY


@pytest.mark.parametrize("names, kw, exc, match", [
    ((), dict(params=()), ValueError, "`names` must hold at least one"),
    ((3,), dict(params=()), TypeError, "`names` must be non-empty strings"),
    (("twice", "twice"), dict(params=()), ValueError, "`names` must differ"),
    (("p",), dict(params=("lr",)), TypeError, "`params` must hold"),
    (("p",), dict(params=(Param("a", 1.0), Param("a", 2.0))), ValueError, "each parameter once"),
    (("p",), dict(params=(), kernel="sgd"), ValueError, "`kernel` must be a rule"),
    (("p",), dict(params=(Param("a", 1.0),), name_param="b"), ValueError, "`name_param`"),
])
def test_a_registration_entry_is_checked_before_anything_registers(names, kw, exc, match):
    with pytest.raises(exc, match=match):
        rule(*names, **kw)
    assert not set(n for n in names if isinstance(n, str)) & set(REGISTRY)
    with pytest.raises(TypeError, match="decorates a class"):
        rule("not_a_class", params=())(lambda: None)



@pytest.mark.parametrize("args, kw, exc, match", [
    (("eta_minus", 1.5), dict(low=0.0, high=1.0, low_open=True, high_open=True), ValueError,
     r"^Param 'eta_minus': `default` must be in \(0\.0, 1\.0\), got 1\.5\.$"),
    (("rate", 0.0), dict(low=0.0, low_open=True), ValueError,
     r"^Param 'rate': `default` must be in \(0\.0, inf\)"),
    (("rate", 0.5), dict(low=1.0, high=0.0), ValueError,
     r"^Param 'rate': `low` must be below `high` .*got the empty range \[1\.0, 0\.0\]\.$"),
    (("rate", 0.5), dict(low=0.5, high=0.5, high_open=True), ValueError, "empty range"),
    (("rate", float("nan")), {}, ValueError, r"^Param 'rate': `default` must be finite, got nan\.$"),
    (("rate", float("inf")), dict(low=0.0), ValueError, "`default` must be finite"),
    (("rate", 0.5), dict(low=float("nan")), ValueError, r"`low` must be a number or None, got nan"),
    (("rate", 0.5), dict(high="1"), TypeError, r"`high` must be a real number or None, got str"),
    (("rate", None), {}, ValueError, r"`default` must be a value .*optional=True.*got None"),
    (("rate", "fast"), {}, TypeError, r"^Param 'rate': `default` must be a real number, got str"),
    (("maxcor", 2.0), dict(kind=int, low=1), TypeError,
     r"^Param 'maxcor': `default` must be an integer, got float 2\.0\.$"),
    (("maxcor", True), dict(kind=int), TypeError, "`default` must be an integer, got bool"),
    (("maxcor", 0), dict(kind=int, low=1), ValueError, r"`default` must be >= 1, got 0\.$"),
    (("rate", 0.5), dict(kind=str), ValueError, r"`kind` must be float, int or None, got <class 'str'>"),
    (("rate", 0.5), dict(optional=1), TypeError, r"`optional` must be True or False, got 1"),
    (("", 0.5), {}, ValueError, r"^`name` must be a Python identifier .*got ''\.$"),
    (("learning rate", 0.5), {}, ValueError, "`name` must be a Python identifier"),
    (("lambda", 0.5), {}, ValueError, "that is not a keyword"),
    ((3, 0.5), {}, TypeError, r"^`name` must be a string, got int 3\.$"),
])
def test_a_param_is_checked_when_it_is_declared(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        Param(*args, **kw)


def test_params_the_catalogue_declares_pass_their_own_checks():
    assert Param("batch_size", None, kind=int, low=1, optional=True).default is None
    assert Param("damping", "identity", kind=None).check("diagonal") == "diagonal"
    assert Param("delta0", None, kind=None).default is None
    assert Param("unit", 1.0, low=1.0, high=1.0).check(1) == 1.0
    for make in REGISTRY.values():
        for p in getattr(make, "func", make).PARAMS:
            assert Param(p.name, p.default, p.kind, p.low, p.high, p.low_open, p.high_open,
                         p.optional, p.doc) == p


SIGN_SGD_STEP = """\
/* sign SGD (Bernstein et al. 2018): w -= rate sign(g); a zero gradient, no step */
FN_R_STEP_SIGNATURE(sign_sgd)
{
    (void)gp, (void)st, (void)dw;
    *w = *w + FN_R(NEG_SIGN_TIMES)(*g, c->rate);
}
"""

SIGN_SGD_RUN = """\
import numpy as np
from fastnet import MLP, train, train_many
from fastnet.algorithms import KernelRule, Param, rule, from_spec
from fastnet.gradients import value_and_grad


@rule("sign_sgd", kernel="sign_sgd", params=(
    Param("learning_rate", 0.01, low=0.0, low_open=True),))
class SignSGD(KernelRule):
    '''sign SGD (Bernstein et al. 2018), epoch-batched.'''
    TITLE = "sign SGD, epoch-batched"


rng = np.random.default_rng(0)
X, Y = rng.uniform(-1, 1, (30, 3)), rng.uniform(0, 1, (30, 2))
net = MLP(3, (4,), 2, hidden_activation="tanh", output_activation="logistic", seed=1)
w = net.weights.copy()
errors = []
for epoch in range(25):                       # the NumPy reference
    e, g = value_and_grad(net.copy().set_weights(w), X, Y)
    errors.append(e)
    w = w - 0.01 * np.sign(g)
r = train(net.copy(), X, Y, algorithm="sign_sgd(learning_rate=0.01)", max_epochs=25)
assert np.allclose(r.net.weights, w, rtol=1e-12, atol=1e-14), "single network"
W = rng.uniform(-0.5, 0.5, (11, net.n_connections))
many = train_many(net, X, Y, algorithm=from_spec("sign_sgd"), initial_weights=W, max_epochs=25)
assert many._setup["batch"]["method"] == "lanes", many._setup["batch"]
for i in range(11):
    one = train(net.copy().set_weights(W[i]), X, Y, algorithm=SignSGD(), max_epochs=25)
    assert np.allclose(many.weights[i], one.net.weights, rtol=1e-12, atol=1e-14), i
print("sign_sgd trained", r.epochs, many.epochs.tolist()[:3])
"""


@pytest.mark.slow  # builds three kernel modules (about 20 s on two cores)
def test_a_rule_added_through_the_table_alone_trains_in_both_layouts(tmp_path):
    pytest.importorskip("Cython")
    src = Path(fastnet.__file__).resolve().parent
    copy = tmp_path / "src" / "fastnet"
    rebuilt = ("_rules", "_per_weight", "_trials")
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns(
        "__pycache__", "*.c", *(f"{m}.*.so" for m in rebuilt)))
    rules_h = copy / "_kernels" / "_rules.h"
    text = rules_h.read_text()
    # 1. its parameters and its table line
    text = text.replace("#define FN_RULES(X)", "#define FN_SIGN_SGD_FIELDS(F) F(learning_rate)\n"
                        "#define FN_RULES(X)", 1)
    end = "    /* (the table's end: a new rule's line goes above) */\n"
    assert end in text
    text = text.replace(end, "    X(SIGN_SGD, sign_sgd, FN_SIGN_SGD_FIELDS, 0, 0, 0)" + " " * 30
                        + "\\\n" + end, 1)
    # 2. its step
    text = text.replace("#undef FN_R_STEP_SIGNATURE\n", SIGN_SGD_STEP + "#undef FN_R_STEP_SIGNATURE\n", 1)
    rules_h.write_text(text)
    build = textwrap.dedent(f"""
        from Cython.Build import cythonize
        from setuptools import Extension, setup
        kernels = "src/fastnet/_kernels"
        exts = [Extension(f"fastnet._kernels.{{m}}", [f"{{kernels}}/{{m}}.pyx"],
                          include_dirs=[kernels], extra_compile_args=["-O1", "-g0"])
                for m in {rebuilt!r}]
        setup(ext_modules=cythonize(exts, include_path=["src"], quiet=True,
                                    compiler_directives=dict(language_level=3,
                                        boundscheck=False, wraparound=False, cdivision=True)),
              package_dir={{"": "src"}}, script_args=["build_ext", "--inplace", "-j", "2"])
    """)
    done = subprocess.run([sys.executable, "-c", build], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for m in rebuilt:
        built = list((tmp_path / "src" / "fastnet" / "_kernels").glob(f"{m}.*.so"))
        assert built, m
    run = subprocess.run([sys.executable, "-c", SIGN_SGD_RUN], cwd=tmp_path, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(tmp_path / "src")))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "sign_sgd trained 25" in run.stdout
