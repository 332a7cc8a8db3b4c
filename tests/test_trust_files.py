"""Hostile files get named errors: Proben1 files, network files, pickles; data integrity."""
import io
import json
import pickle
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _result_files import rewrite, small_result_file
from fastnet import MLP, cli
from fastnet.datasets import load_proben1, read_proben1
# (the reader's limits, not exported)
from fastnet.datasets._format import MAX_COLUMNS, MAX_HEADER_VALUE
from fastnet.exceptions import DataFormatError, DataIntegrityWarning
from fastnet.experiment import MAX_NESTING, ResultFileError
from fastnet.report import summarize
from _extras import needs

FIXTURE = Path(__file__).parent / "data" / "proben1_tiny_fixture.txt"
HEADER = ["bool_in=1", "real_in=2", "bool_out=2", "real_out=0", "training_examples=4",
          "validation_examples=2", "test_examples=2"]


def with_header(tmp_path, **changes):
    lines = FIXTURE.read_text().splitlines()
    for i, line in enumerate(lines[:7]):
        key = line.split("=")[0]
        if key in changes:
            lines[i] = f"{key}={changes[key]}"
    path = tmp_path / "f.dt"
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------- the reader

@pytest.mark.parametrize("key, value", [("real_in", "9" * 5000), ("real_out", str(10 ** 19)),
                                        ("training_examples", str(MAX_HEADER_VALUE + 1)),
                                        ("bool_in", "0" * 30 + "12345678901")])
def test_huge_header_values_are_format_errors(tmp_path, key, value):
    path = with_header(tmp_path, **{key: value})
    line = 1 + [h.split("=")[0] for h in HEADER].index(key)
    with pytest.raises(DataFormatError, match=rf"f\.dt:{line}: `{key}` must be at most") as e:
        read_proben1(path)
    assert e.value.line == line and e.value.path == str(path)


def test_leading_zeros_are_still_numbers(tmp_path):
    path = with_header(tmp_path, bool_in="0" * 20 + "1")
    assert read_proben1(path).header.bool_in == 1


def test_absurd_column_counts_without_examples_are_refused(tmp_path):
    path = tmp_path / "empty.dt"
    path.write_text("bool_in=0\nreal_in=1000000000000\nbool_out=0\nreal_out=1\n"
                    "training_examples=0\nvalidation_examples=0\ntest_examples=0\n")
    with pytest.raises(DataFormatError, match="must be at most"):
        read_proben1(path)
    path.write_text(f"bool_in=0\nreal_in={MAX_COLUMNS}\nbool_out=0\nreal_out=1\n"
                    "training_examples=0\nvalidation_examples=0\ntest_examples=0\n")
    with pytest.raises(DataFormatError, match=rf"empty\.dt:4: .*at most {MAX_COLUMNS} in all"):
        read_proben1(path)


def _mutate(text, data):
    """One random corruption of a valid file's text (header or body)."""
    lines = text.split("\n")
    kind = data.draw(st.sampled_from(["header_value", "drop", "duplicate", "field", "insert",
                                      "truncate", "bytes"]))
    if kind == "header_value":
        i = data.draw(st.integers(0, 6))
        key = lines[i].split("=")[0]
        value = data.draw(st.one_of(
            st.integers(-5, 10 ** 30).map(str), st.text(alphabet=st.characters(max_codepoint=255),
                                                        max_size=8),
            st.integers(4000, 6000).map(lambda n: "7" * n),
            st.sampled_from(["1e3", "0x10", "nan", " 3", "-0", "+4"])))
        lines[i] = f"{key}={value}"
    elif kind == "drop":
        del lines[data.draw(st.integers(0, len(lines) - 2))]
    elif kind == "duplicate":
        i = data.draw(st.integers(0, len(lines) - 2))
        lines.insert(i, lines[i])
    elif kind == "field":
        i = data.draw(st.integers(7, len(lines) - 2))
        fields = lines[i].split()
        j = data.draw(st.integers(0, len(fields) - 1))
        fields[j] = data.draw(st.sampled_from(["nan", "inf", "1e999", "x", "", "1.2.3", "--1",
                                               "5" * 400]))
        lines[i] = " ".join(fields)
    elif kind == "insert":
        lines.insert(data.draw(st.integers(0, len(lines) - 1)),
                     data.draw(st.text(alphabet=" 0123456789.=eE-+\t\rabc_", max_size=30)))
    elif kind == "truncate":
        return text[:data.draw(st.integers(0, len(text) - 1))]
    else:
        raw = bytearray(text.encode())
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        return raw.decode("latin-1")
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_reader_error_is_a_format_error_with_file_and_line(tmp_path, data):
    path = tmp_path / "fuzz.dt"
    path.write_bytes(_mutate(FIXTURE.read_text(), data).encode("latin-1"))
    try:
        f = read_proben1(path)
    except DataFormatError as exc:
        assert exc.path == str(path)
        assert str(exc).startswith(str(path))
        assert exc.line is None or exc.line >= 1
        return
    assert f.X.shape == (f.header.n_examples, f.header.n_in)
    assert f.Y.shape == (f.header.n_examples, f.header.n_out)
    assert np.isfinite(f.X).all() and np.isfinite(f.Y).all()


# --------------------------------------------------------------- data integrity

def test_a_changed_proben1_file_loads_with_a_warning(proben1_root, tmp_path):
    ds = load_proben1("cancer1", proben1_root)
    assert ds.matches_published is True and len(ds.sha256) == 64
    changed = tmp_path / "cancer1.dt"
    text = (Path(ds.path)).read_text().splitlines()
    text[7] = text[7].replace("0.", "0.0", 1)   # the same value, other bytes
    changed.write_text("\n".join(text) + "\n")
    with pytest.warns(DataIntegrityWarning, match="differ from the published Proben1 file"):
        other = load_proben1("cancer1", tmp_path)
    assert other.matches_published is False


def test_result_headers_say_whether_the_data_matched(proben1_root, tmp_path):
    from fastnet.experiment import Experiment, read_results, run_experiment

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(Path(proben1_root) / "glass1.dt", data / "glass1.dt")
    text = (Path(proben1_root) / "cancer1.dt").read_text().splitlines()
    text[7] = text[7].replace("0.", "0.0", 1)
    (data / "cancer1.dt").write_text("\n".join(text) + "\n")
    exp = Experiment(problems=["cancer1", "glass1"], networks=["linear"], runs=1, root=data,
                     options={"max_epochs": 5})
    with pytest.warns(DataIntegrityWarning):
        run_experiment(exp, tmp_path / "r.jsonl")
    header = read_results(tmp_path / "r.jsonl").header
    assert header["data"]["cancer1"]["matches_published"] is False
    assert header["data"]["glass1"]["matches_published"] is True


# --------------------------------------------------------------- network files

def _npz(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def good_config():
    return {"n_in": 2, "hidden": [3], "n_out": 1, "shortcut": True,
            "hidden_activation": "proben1", "output_activation": "linear"}


def test_network_file_asking_for_a_huge_network_allocates_nothing(tmp_path):
    config = dict(good_config(), n_in=10 ** 9, hidden=[10 ** 9])
    path = _npz(tmp_path / "huge.npz", format_version=np.array(1),
                config=np.array(json.dumps(config)), weights=np.zeros(15))
    with pytest.raises(ValueError, match=r"huge.npz: the configuration gives 1000000003000000001 "
                                         r"connections, more than MAX_CONNECTIONS = 100000000"):
        MLP.load(path)


def test_network_file_with_a_huge_weights_header_allocates_nothing(tmp_path):
    # the weights member declares 10**12 doubles but holds a few bytes
    path = _npz(tmp_path / "net.npz", format_version=np.array(1),
                config=np.array(json.dumps(good_config())), weights=np.zeros(15))
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10 ** 12,)})
    members["weights.npy"] = b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + b"\0" * 64
    with zipfile.ZipFile(path, "w") as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    with pytest.raises(ValueError, match=r"weights must be float64 of shape \(15,\)"):
        MLP.load(path)


@pytest.mark.parametrize("change, message", [
    ({"extra": 1}, r"unknown keys \['extra'\]"),
    ({"n_in": "2"}, r"`n_in` must be int"),
    ({"hidden": [3.5]}, r"`hidden` must be list of int"),
    ({"shortcut": 1}, r"`shortcut` must be bool"),
    ({"n_out": 0}, r"layer sizes must be >= 1"),
    ({"hidden_activation": "softplus"}, r"`hidden_activation`"),
    ({"hidden_activation": "softmax"}, r"`hidden_activation` must be one of \[.*\], got 'softmax'"),
])
def test_network_file_configs_are_checked_key_by_key(tmp_path, change, message):
    path = _npz(tmp_path / "net.npz", format_version=np.array(1),
                config=np.array(json.dumps(dict(good_config(), **change))),
                weights=np.zeros(15))
    with pytest.raises(ValueError, match=message):
        MLP.load(path)


@pytest.mark.parametrize("version", [np.array(1.9), np.array(1.0), np.array([1]), np.array(2)])
def test_network_file_versions_are_integers(tmp_path, version):
    path = _npz(tmp_path / "net.npz", format_version=version,
                config=np.array(json.dumps(good_config())), weights=np.zeros(15))
    with pytest.raises(ValueError, match="format version"):
        MLP.load(path)


def test_pickled_state_is_checked_like_a_file():
    net = MLP(2, (3,), 1, seed=0)
    state = net.__getstate__()
    for bad, message in ((dict(state, format_version=1.9), "format version 1.9"),
                         (dict(state, format_version=True), "format version True"),
                         (dict(state, config=dict(state["config"], junk=1)), "unknown keys"),
                         (dict(state, weights=np.zeros(3)), r"shape \(15,\)")):
        blank = MLP.__new__(MLP)
        with pytest.raises(ValueError, match=message):
            blank.__setstate__(bad)
    assert pickle.loads(pickle.dumps(net)) == net


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_network_files_give_value_errors(tmp_path, data):
    path = tmp_path / "net.npz"
    MLP(3, (4, 2), 2, seed=1).save(path)
    raw = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    path.write_bytes(bytes(raw))
    try:
        net = MLP.load(path)
    except ValueError:
        return
    assert net.n_connections == net.weights.size and np.isfinite(net.weights).all()


# --------------------------------------------------------------------------- result files
# `fastnet report FILE` of a crafted file: one named error (file:line and field), never a
# traceback. The reproducers of the probe that found RecursionError, AttributeError,
# KeyError, OverflowError and "unhashable type" come first.


@pytest.fixture(scope="module")
def result_file(proben1_root, tmp_path_factory):
    return small_result_file(proben1_root, tmp_path_factory.mktemp("rf") / "r.jsonl")


def _set(path, value):
    """A function setting the dotted ``path`` of a dict to ``value``."""
    *outer, last = path.split(".")

    def change(obj):
        for k in outer:
            obj = obj[k]
        obj[last] = value
    return change


def _delete(path):
    *outer, last = path.split(".")

    def change(obj):
        for k in outer:
            obj = obj[k]
        del obj[last]
    return change


def _craft(result_file, tmp_path, header=None, record=None, raw=None):
    """The file with its first record (or header) changed; ``raw`` replaces the text
    ``"RAW"`` by a literal JSON cannot write (NaN, 1e999, ...)."""
    first = []

    def once(r):
        if not first:
            first.append(r)
            record(r)
    path = rewrite(result_file, tmp_path / "r.jsonl", header, once if record else None)
    if raw is not None:
        path.write_text(path.read_text().replace('"RAW"', raw, 1))
    return path


CRAFTED = [  # (header change, record change, raw literal, line, message)
    (None, _set("test", "RAW"), "[" * 100_000, 2,
     f"run record: it nests arrays and objects deeper than {MAX_NESTING} levels"),
    (_set("grid", "RAW"), None, "Infinity", 1, "header: `grid` holds Infinity, not a finite"),
    (None, _delete("test.squared_error_percentage"), None, 2,
     "run record: `test.squared_error_percentage` is missing"),
    (None, _set("traversals.total", "RAW"), "1e999", 2,
     "run record: `traversals.total` holds 1e999, not a finite number"),
    (None, _set("run", [0]), None, 2, r"run record: `run` must be an integer in \[0, 2\*\*63 - 1\], got \[0\]"),
    (None, _set("cpu_time", "RAW"), "NaN", 2, "`cpu_time` holds NaN"),
    (None, _set("val.squared_error_percentage", "RAW"), "-Infinity", 2,
     "`val.squared_error_percentage` holds -Infinity"),
    (None, _set("test_predictions", [0, 1, "RAW"]), "1e400", 2, r"`test_predictions\[2\]` holds 1e400"),
    (None, _set("test.squared_error_percentage", 1e200), None, 2,
     r"`test.squared_error_percentage` must be a number in \[0, 1e\+150\], got 1e\+200"),
    (None, _set("test.classification_error", 101.0), None, 2,
     r"`test.classification_error` must be a number in \[0, 100\], got 101.0"),
    (None, _set("epochs", -1), None, 2, "`epochs` must be an integer"),
    (None, _set("traversals.total", 2 ** 64), None, 2, "`traversals.total` must be an integer"),
    (None, _set("epochs", 3.0), None, 2, "`epochs` must be an integer"),
    (None, _set("problem", "cancer1\x1b[2J"), None, 2, "`problem` must be a non-empty string of printable"),
    (None, _set("problem", "glass1"), None, 2, r"`problem` 'glass1' is not in the header's grid \(cancer1\)"),
    (None, _set("run", 4), None, 2, "`run` 4 is outside the header's grid of 4 runs"),
    (None, _set("stop_reason", None), None, 2, "`stop_reason` must be a non-empty string"),
    (None, _set("seed.spawn_key", [1, -1]), None, 2, r"`seed.spawn_key\[1\]` must be an integer in \[0, 2\*\*64 - 1\]"),
    (None, _set("test_wrong", "01x"), None, 2, "`test_wrong` must be a string of 0 and 1"),
    (_set("grid.runs", "4"), None, None, 1, "header: `grid.runs` must be an integer"),
    (_set("grid.problems", ["cancer1", 7]), None, None, 1, r"`grid.problems\[1\]` must be a non-empty"),
    (_set("build.extra_compile_args", [1]), None, None, 1, r"`build.extra_compile_args\[0\]` must be a string"),
    (_set("checklist", {"cancer1/linear": 5}), None, None, 1, "`checklist.cancer1/linear` must be an object"),
    (lambda h: h["grid"].update(problems=[str(k) for k in range(1000)],
                                networks=[str(k) for k in range(1000)]),
     None, None, 1, "names 1000 problems and 1000 networks; at most 100,000 cells"),
    (_set("created", {"a": "RAW"}), None, '[' * 40 + ']' * 40, 1, "header: it nests"),
]


@pytest.mark.parametrize("header, record, raw, line, message", CRAFTED,
                         ids=[re.sub(r"[^\w.]+", "-", c[-1])[:50] for c in CRAFTED])
def test_crafted_result_files_are_named_errors(result_file, tmp_path, capsys, header, record,
                                               raw, line, message):
    path = _craft(result_file, tmp_path, header, record, raw)
    with pytest.raises(ResultFileError, match=rf"r\.jsonl:{line}: .*{message}"):
        summarize(path)
    assert cli.main(["report", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"r.jsonl:{line}: " in err and "Traceback" not in err


def test_a_valid_file_still_reads(result_file):
    rep = summarize(result_file)
    assert rep.rows[0].n_runs == 4 and rep.incomplete == {}
    assert "Incomplete" not in rep.to_text() + rep.to_markdown() + rep.to_latex()
# ------------------------------------------- network files: checked before allocated

def _zip_members(path, members, *, bomb=None):
    """Write ``members`` (name -> raw .npy bytes) to a zip; ``bomb`` = (name, shape, dtype)
    adds a deflated member whose header declares ``shape`` and whose data are zeros."""
    with zipfile.ZipFile(path, "w") as z:
        for name, raw in members.items():
            z.writestr(name + ".npy", raw)
        if bomb is not None:
            name, shape, dtype = bomb
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                header, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            info = zipfile.ZipInfo(name + ".npy")
            info.compress_type = zipfile.ZIP_DEFLATED
            with z.open(info, "w", force_zip64=True) as f:
                f.write(b"\x93NUMPY\x01\x00" + header.getvalue()[8:])
                chunk = bytes(1 << 20)
                for _ in range(nbytes >> 20):
                    f.write(chunk)
                f.write(bytes(nbytes & ((1 << 20) - 1)))
    return path


def _npy(array):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def _peak_of(call):
    """(exception, peak bytes traced) of ``call()``, which must raise ValueError."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            call()
        return info.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


_NET = {"config": _npy(json.dumps(good_config())), "weights": _npy(np.zeros(15)),
        "format_version": _npy(np.array(1))}


def test_a_format_version_of_20m_zeros_is_refused_from_its_header(tmp_path):
    # 160 MB of int64 zeros in 160 kB: the old reader allocated them all before refusing
    members = {k: v for k, v in _NET.items() if k != "format_version"}
    path = _zip_members(tmp_path / "bomb.npz", members,
                        bomb=("format_version", (20_000_000,), "<i8"))
    assert path.stat().st_size < 1_000_000
    exc, peak = _peak_of(lambda: MLP.load(path))
    assert peak < 4_000_000
    assert re.search(r"bomb.npz: the format version \(array `format_version`\) takes 160000\d+ "
                     r"bytes", str(exc))


def test_an_estimator_file_with_a_huge_member_is_refused_from_its_header(tmp_path):
    needs("sklearn")
    from fastnet.sklearn import RpropRegressor

    members = {"estimator": _npy(np.array("RpropRegressor")), "pickle": _npy(np.zeros(3, np.uint8))}
    path = _zip_members(tmp_path / "est.npz", members, bomb=("format_version", (20_000_000,), "<i8"))
    exc, peak = _peak_of(lambda: RpropRegressor.load(path))
    assert peak < 4_000_000
    assert re.search(r"est.npz: not a fastnet estimator file: the format version \(array `format_version`\) "
                     r"takes 160000\d+ bytes", str(exc))


def test_a_config_declaring_too_many_weights_is_refused_before_them(tmp_path):
    # 2e8 weights declared (1.6 GB), their data absent: the old reader allocated
    # them, then failed reading with a bare EOF message
    config = dict(good_config(), n_in=10**8 - 5, hidden=[1])
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (2 * 10**8 - 5 + 2,)})
    path = _zip_members(tmp_path / "big.npz", {
        "format_version": _npy(np.array(1)), "config": _npy(json.dumps(config)),
        "weights": b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + bytes(64)})
    exc, peak = _peak_of(lambda: MLP.load(path))
    assert peak < 4_000_000
    assert re.search(r"big.npz: the configuration gives 199999993 connections, more than "
                     r"MAX_CONNECTIONS = 100000000", str(exc))


def test_highly_compressed_weights_are_refused_before_they_are_inflated(tmp_path):
    config = dict(good_config(), n_in=5 * 10**6 - 3, hidden=[1])   # 10**7 weights, 80 MB
    # connections: 1 hidden unit (n_in + 1) + 1 output (n_in + 1 + 1)
    members = {"format_version": _npy(np.array(1)), "config": _npy(json.dumps(config))}
    path = _zip_members(tmp_path / "zeros.npz", members,
                        bomb=("weights", (2 * (5 * 10**6 - 3) + 3,), "<f8"))
    exc, peak = _peak_of(lambda: MLP.load(path))
    assert peak < 4_000_000
    assert re.search(r"zeros.npz: the array `weights` is compressed \d+ : \d+, more than 100 : 1",
                     str(exc))


@pytest.mark.parametrize("content", [b"fastnet 1 2 3\n", b"\x89PNG\r\n\x1a\n" + bytes(100)],
                         ids=["text", "png"])
def test_a_file_that_is_not_a_zip_is_not_a_network_file(tmp_path, content):
    path = tmp_path / "picture.png"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"picture.png: not a fastnet network file \(not a zip") as info:
        MLP.load(path)
    assert "allow_pickle" not in str(info.value)


@pytest.mark.parametrize("config, what", [
    ("{not json", "JSONDecodeError"),
    ("[" * 10_000, "RecursionError"),
    ('{"n_in": ' + "1" * 5000 + "}", "ValueError"),
], ids=["syntax", "depth", "digits"])
def test_a_config_that_is_not_json_is_a_named_error(tmp_path, config, what):
    path = _zip_members(tmp_path / "net.npz", dict(_NET, config=_npy(config)))
    with pytest.raises(ValueError, match=rf"net.npz: the network configuration is not valid "
                                         rf"JSON \({what}"):
        MLP.load(path)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(member=st.sampled_from(["format_version", "config", "weights"]),
       shape=st.lists(st.integers(0, 10**12), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from(["<i8", "<f8", "<U9", "|u1", ">f8", "<c16", "|b1"]),
       data_bytes=st.integers(0, 256))
def test_network_files_with_oversized_arrays_are_refused_cheaply(tmp_path, member, shape, dtype,
                                                                  data_bytes):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": dtype, "fortran_order": False,
                                                  "shape": shape})
    raw = b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + bytes(data_bytes)
    path = _zip_members(tmp_path / "net.npz", dict(_NET, **{member: raw}))
    import tracemalloc

    tracemalloc.start()
    try:
        try:
            net = MLP.load(path)
        except ValueError as exc:
            assert str(exc).startswith(str(path))
        else:
            assert net.n_connections == 15
        assert tracemalloc.get_traced_memory()[1] < 2_000_000
    finally:
        tracemalloc.stop()
