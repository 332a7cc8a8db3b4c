"""Proben1 registry, name parsing, data directory resolution, loading and partitionings."""

import dataclasses
import doctest
import shutil
from pathlib import Path

import numpy as np
import pytest

import fastnet.datasets as fd
from fastnet.datasets import (
    PARTITIONINGS,
    PROBEN1_PROBLEMS,
    Dataset,
    Split,
    find_proben1_file,
    list_proben1,
    load_proben1,
    parse_proben1_name,
    proben1_search_dirs,
    read_proben1,
)
from fastnet.exceptions import DataFormatError

# Proben1 overview (Prechelt 1994, Table 1 and the .dt headers):
# problem: (examples, inputs, outputs, kind)
OVERVIEW = {
    "building": (4208, 14, 3, "approximation"),
    "cancer": (699, 9, 2, "classification"),
    "card": (690, 51, 2, "classification"),
    "diabetes": (768, 8, 2, "classification"),
    "flare": (1066, 24, 3, "approximation"),
    "gene": (3175, 120, 3, "classification"),
    "glass": (214, 9, 6, "classification"),
    "heart": (920, 35, 2, "classification"),
    "hearta": (920, 35, 1, "approximation"),
    "heartac": (303, 35, 1, "approximation"),
    "heartc": (303, 35, 2, "classification"),
    "horse": (364, 58, 3, "classification"),
    "mushroom": (8124, 125, 2, "classification"),
    "soybean": (683, 82, 19, "classification"),
    "thyroid": (7200, 21, 3, "classification"),
}

# SPEC section 5.4 (Proben1 Table 7), copied verbatim: permutations 1 | 2 | 3.
TABLE7 = """
building 16+0 l 333 | 16+8 l 605 | 16+8 s 605; cancer 4+2 l 100 | 8+4 l 196 | 16+8 l 436;
card 32+0 l 1832 | 24+0 l 1400 | 16+8 l 1528; diabetes 32+0 l 370 | 16+8 l 410 | 32+0 l 370;
flare 32+0 s 971 | 32+0 s 971 | 24+0 s 747; gene 4+2 l 1115 | 4+2 s 1115 | 4+2 s 1115;
glass 16+8 l 572 | 16+8 l 572 | 16+8 l 572; heart 32+0 l 1288 | 32+0 l 1288 | 32+0 l 1288;
hearta 32+0 l 1220 | 16+0 l 628 | 32+0 l 1220; heartac 2+0 l 110 | 8+4 l 512 | 16+8 s 1052;
heartc 16+8 l 1112 | 8+8 l 744 | 32+0 l 1288; horse 16+8 l 1793 | 16+8 l 1793 | 32+0 l 2161;
soybean 16+8 l 4153 | 32+0 l 4841 | 16+0 l 3209; thyroid 16+8 l 794 | 8+4 l 398 | 16+8 l 794
"""


def table7():
    out = {}
    for entry in TABLE7.replace("\n", " ").split(";"):
        name, rest = entry.split(maxsplit=1)
        out[name] = [tuple(p.split()) for p in rest.split("|")]
    return out


ALL_NAMES = [f"{p}{k}" for p in OVERVIEW for k in (1, 2, 3)]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No FASTNET_DATA, and a private empty cache under tmp_path."""
    monkeypatch.delenv("FASTNET_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path


# ----------------------------------------------------------------------------- registry


def test_registry_matches_proben1_overview():
    assert list(PROBEN1_PROBLEMS) == list(OVERVIEW)
    for name, (n, n_in, n_out, kind) in OVERVIEW.items():
        p = PROBEN1_PROBLEMS[name]
        assert (p.name, p.n_examples, p.n_in, p.n_out, p.kind) == (name, n, n_in, n_out, kind)
        assert p.n_train + p.n_val + p.n_test == n
        assert p.n_train == (n + 1) // 2 or p.n_train == n // 2  # 50 %
        assert abs(p.n_val - n / 4) <= 1 and abs(p.n_test - n / 4) <= 1
        assert p.file_names == (f"{name}1.dt", f"{name}2.dt", f"{name}3.dt")
    assert {p.directory for p in PROBEN1_PROBLEMS.values() if p.name.startswith("heart")} == {
        "heart"}


def test_pivots_are_proben1_table_7():
    table = table7()
    assert PROBEN1_PROBLEMS["mushroom"].pivots is None
    assert PROBEN1_PROBLEMS["mushroom"].pivot(2) is None
    n = 0
    for name, rows in table.items():
        problem = PROBEN1_PROBLEMS[name]
        for perm, (spec, kind, c) in enumerate(rows, start=1):
            a = problem.pivot(perm)
            assert a is problem.pivots[perm - 1]
            assert a.spec == f"{spec} {kind}" and a.output == kind and a.connections == int(c)
            assert a.hidden == tuple(int(h) for h in spec.split("+") if h != "0")
            assert a.shortcut and a.layer_sizes == (problem.n_in, *a.hidden, problem.n_out)
            n += 1
    assert n == 42


def _connections_by_hand(sizes):
    # every layer feeds every later layer, plus one bias per non-input node
    return sum(sizes[i] * sizes[j] for j in range(len(sizes)) for i in range(j)) + sum(sizes[1:])


def test_pivot_connection_counts_follow_from_the_topology():
    assert _connections_by_hand((9, 4, 2, 2)) == 100  # SPEC section 1 worked example
    for problem in PROBEN1_PROBLEMS.values():
        for a in problem.pivots or ():
            assert _connections_by_hand(a.layer_sizes) == a.connections, (problem.name, a.spec)


def test_partitioning_table_is_the_spec():
    assert dict(PARTITIONINGS) == {
        "a": ("train", "val", "test"), "b": ("train", "test", "val"),
        "c": ("val", "train", "test"), "d": ("val", "test", "train"),
        "e": ("test", "val", "train"), "f": ("test", "train", "val"),
    }


def test_registry_is_read_only():
    with pytest.raises(TypeError):
        PROBEN1_PROBLEMS["new"] = PROBEN1_PROBLEMS["cancer"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROBEN1_PROBLEMS["cancer"].n_in = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROBEN1_PROBLEMS["cancer"].pivots[0].connections = 1


def test_pivot_rejects_bad_permutation():
    with pytest.raises(ValueError, match=r"`permutation` must be 1, 2 or 3, got 4"):
        PROBEN1_PROBLEMS["cancer"].pivot(4)


# ------------------------------------------------------------------------------ names


@pytest.mark.parametrize("name, expected", [
    ("cancer1", ("cancer", 1, "a")), ("glass1d", ("glass", 1, "d")),
    ("heartac3", ("heartac", 3, "a")), ("hearta2f", ("hearta", 2, "f")),
    ("heartc1a", ("heartc", 1, "a")),
])
def test_parse_names(name, expected):
    assert parse_proben1_name(name) == expected


@pytest.mark.parametrize("name, error, pattern", [
    ("iris1", ValueError, r"`name` 'iris1' is not a Proben1 dataset; valid problems are "
     r"building, cancer, card, .*, thyroid"),
    ("Cancer1", ValueError, r"valid problems are building"),
    ("cancer", ValueError, r"a permutation 1-3 .* e\.g\. 'cancer1'"),
    ("cancer4", ValueError, r"permutation 4; Proben1 has permutations 1, 2 and 3"),
    ("cancer0", ValueError, r"permutation 0"),
    ("cancer1g", ValueError, r"partitioning 'g'; valid partitionings are a, b, c, d, e, f"),
    ("", ValueError, r"valid problems are"),
    (1, TypeError, r"`name` must be a string"),
])
def test_bad_names(name, error, pattern):
    with pytest.raises(error, match=pattern):
        parse_proben1_name(name)
    with pytest.raises(error, match=pattern):
        load_proben1(name, root="/nonexistent")


# ------------------------------------------------------------------------- resolution


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("dummy\n")
    return path


@pytest.mark.parametrize("layout", [
    "cancer1.dt", "cancer/cancer1.dt", "proben1/cancer/cancer1.dt",
])
def test_find_flat_or_tree(tmp_path, layout):
    expected = _touch(tmp_path / layout)
    assert find_proben1_file("cancer1c", root=tmp_path) == expected


@pytest.mark.parametrize("layout", [
    "heartac2.dt", "heart/heartac2.dt", "heartac/heartac2.dt", "proben1/heart/heartac2.dt",
])
def test_find_heart_variants_in_the_heart_directory(tmp_path, layout):
    expected = _touch(tmp_path / layout)
    assert find_proben1_file("heartac2", root=tmp_path) == expected


def test_flat_file_wins_over_tree(tmp_path):
    flat = _touch(tmp_path / "glass3.dt")
    _touch(tmp_path / "glass" / "glass3.dt")
    assert find_proben1_file("glass3", root=tmp_path) == flat


def test_search_order_root_then_env_then_cache(clean_env, monkeypatch):
    tmp = clean_env
    cache = tmp / "xdg" / "fastnet" / "proben1"
    assert proben1_search_dirs() == [cache]
    assert fd.default_cache_dir() == cache
    cached = _touch(cache / "card2.dt")
    assert find_proben1_file("card2") == cached
    monkeypatch.setenv("FASTNET_DATA", str(tmp / "env"))
    assert proben1_search_dirs() == [tmp / "env", cache]
    assert find_proben1_file("card2") == cached          # falls through to the cache
    env_file = _touch(tmp / "env" / "card" / "card2.dt")
    assert find_proben1_file("card2") == env_file        # FASTNET_DATA before the cache
    assert proben1_search_dirs(tmp / "root") == [tmp / "root"]
    with pytest.raises(FileNotFoundError):               # an explicit root is the only place
        find_proben1_file("card2", root=tmp / "root")


def test_cache_without_xdg_is_under_home(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert fd.default_cache_dir() == tmp_path / ".cache" / "fastnet" / "proben1"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as XDG says
    assert fd.default_cache_dir() == tmp_path / ".cache" / "fastnet" / "proben1"


def test_missing_file_says_where_and_how_to_fetch(clean_env, monkeypatch):
    monkeypatch.setenv("FASTNET_DATA", str(clean_env / "env"))
    with pytest.raises(FileNotFoundError, match=r"Proben1 file soybean2\.dt not found; looked in: "
                       r".*env/soybean2\.dt; .*env/soybean/soybean2\.dt.*xdg/fastnet/proben1/"
                       r"soybean2\.dt.*fetch_proben1\(\).*fastnet datasets fetch"):
        load_proben1("soybean2")


def test_header_disagreeing_with_registry(tmp_path):
    shutil.copy(Path(__file__).parent / "data" / "proben1_tiny_fixture.txt", tmp_path / "cancer1.dt")
    with pytest.raises(DataFormatError, match=r"cancer1\.dt: header declares 3 inputs, but "
                       r"Proben1 problem `cancer` has 9"):
        load_proben1("cancer1", root=tmp_path)


def test_list_reports_local_availability(clean_env):
    root = clean_env / "data"
    for k in (1, 2, 3):
        _touch(root / f"cancer{k}.dt")
    _touch(root / "heart" / "hearta1.dt")
    rows = list_proben1(root)
    assert [r.problem for r in rows] == list(OVERVIEW)
    by_name = {r.problem: r for r in rows}
    for name, (n, n_in, n_out, kind) in OVERVIEW.items():
        r = by_name[name]
        assert (r.n_examples, r.n_in, r.n_out, r.kind) == (n, n_in, n_out, kind)
    assert by_name["cancer"].available and by_name["cancer"].paths[2] == root / "cancer3.dt"
    assert not by_name["hearta"].available
    assert by_name["hearta"].paths == (root / "heart" / "hearta1.dt", None, None)
    assert not by_name["glass"].available and by_name["glass"].paths == (None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows[0].available = True


# ------------------------------------------------------------------ the real 45 files


@pytest.mark.parametrize("name", ALL_NAMES)
def test_all_45_files_load(proben1_root, name):
    ds = load_proben1(name, root=proben1_root)
    problem = name.rstrip("123")
    n, n_in, n_out, kind = OVERVIEW[problem]
    assert isinstance(ds, Dataset) and ds.name == name and ds.kind == kind
    assert (ds.n_in, ds.n_out) == (n_in, n_out)
    assert ds.n_train + ds.n_val + ds.n_test == n
    assert (ds.n_train, ds.n_val, ds.n_test) == (
        ds.problem.n_train, ds.problem.n_val, ds.problem.n_test)
    assert ds.permutation == int(name[-1]) and ds.partitioning == "a"
    assert ds.architecture is ds.problem.pivot(ds.permutation)
    assert ds.header.n_examples == n and ds.path.name == f"{name}.dt"
    for split in (ds.train, ds.val, ds.test):
        assert isinstance(split, Split)
        X, T = split
        assert X.dtype == T.dtype == np.float64
        assert X.flags.c_contiguous and T.flags.c_contiguous
        assert X.shape == (split.n_examples, n_in) and T.shape == (split.n_examples, n_out)
        assert np.isfinite(X).all() and np.isfinite(T).all()


def test_published_quirks_load_unchanged(proben1_root):
    def raw(name):
        f = read_proben1(find_proben1_file(name, proben1_root))
        return np.hstack([f.X, f.Y]), f

    for name in ("card1", "glass1"):                  # inputs slightly above 1
        assert raw(name)[1].X.max() > 1.0
    for name in ("building1", "gene1", "soybean1"):   # inputs in -1..1
        assert raw(name)[1].X.min() < 0.0
    values, f = raw("hearta1")                        # bool_out=1, analog output
    assert f.header.bool_out == 1 and f.header.real_out == 0
    assert len(np.unique(f.Y)) > 2 and 0.0 < f.Y.min() and f.Y.max() < 1.0
    # and the values are exactly what a plain whitespace parser reads
    text = find_proben1_file("hearta1", proben1_root).read_text().split("\n")[7:-1]
    np.testing.assert_array_equal(values, np.array([ln.split() for ln in text], dtype=float))


ROLE_ORDER = {"a": "tvs", "b": "tsv", "c": "vts", "d": "vst", "e": "svt", "f": "stv"}


@pytest.mark.parametrize("base", ["glass1", "cancer2", "heartac3", "soybean1"])
@pytest.mark.parametrize("part", list("abcdef"))
def test_partitionings_slice_the_raw_file(proben1_root, base, part):
    f = read_proben1(find_proben1_file(base, proben1_root))
    h = f.header
    size = {"t": h.training_examples, "v": h.validation_examples, "s": h.test_examples}
    ds = load_proben1(base + part, root=proben1_root)
    assert ds.name == (base if part == "a" else base + part)
    assert ds.partitioning == part and ds.path == f.path
    start, rows = 0, {}
    for role in ROLE_ORDER[part]:
        rows[role] = slice(start, start + size[role])
        start += size[role]
    assert start == len(f.X)
    for role, split in (("t", ds.train), ("v", ds.val), ("s", ds.test)):
        np.testing.assert_array_equal(split.X, f.X[rows[role]])
        np.testing.assert_array_equal(split.Y, f.Y[rows[role]])
        assert split.X.flags.c_contiguous
    # training + validation in file order
    X, T = ds.training_set(with_validation=True)
    first, second = sorted([rows["t"], rows["v"]], key=lambda s: s.start)
    np.testing.assert_array_equal(X, np.vstack([f.X[first], f.X[second]]))
    np.testing.assert_array_equal(T, np.vstack([f.Y[first], f.Y[second]]))
    assert X.flags.c_contiguous
    assert ds.training_set() is ds.train
    if part == "a":  # Proben1: "the training set consists of the first X+Y examples"
        n = h.training_examples + h.validation_examples
        np.testing.assert_array_equal(X, f.X[:n])


def test_glass1d_worked_example(proben1_root):
    # Proben1: glass1d = first 25 % validation, next 25 % test, final 50 % training
    f = read_proben1(find_proben1_file("glass1", proben1_root))
    ds = load_proben1("glass1d", root=proben1_root)
    assert (ds.n_val, ds.n_test, ds.n_train) == (54, 53, 107)
    np.testing.assert_array_equal(ds.val.X, f.X[:54])
    np.testing.assert_array_equal(ds.test.X, f.X[54:107])
    np.testing.assert_array_equal(ds.train.X, f.X[107:])
    assert ds.architecture.spec == "16+8 l" and ds.architecture.connections == 572


def test_load_through_env_and_tree_layout(proben1_root, clean_env, monkeypatch):
    tree = clean_env / "tree"
    (tree / "proben1" / "heart").mkdir(parents=True)
    shutil.copy(find_proben1_file("heartc2", proben1_root), tree / "proben1" / "heart")
    monkeypatch.setenv("FASTNET_DATA", str(tree))
    ds = load_proben1("heartc2b")
    assert ds.path == tree / "proben1" / "heart" / "heartc2.dt"
    assert ds.kind == "classification" and ds.architecture.spec == "8+8 l"


def test_dataset_is_frozen_and_repr_is_short(proben1_root):
    ds = load_proben1("cancer1", root=proben1_root)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.train = None
    assert repr(ds) == ("Dataset(name='cancer1', kind='classification', n_in=9, n_out=2, "
                        "n_train=350, n_val=175, n_test=174)")


def test_mushroom_loads_fast(proben1_root):
    import time

    path = find_proben1_file("mushroom1", proben1_root)
    read_proben1(path)  # warm the OS cache
    t0 = time.process_time()   # (CPU time: other processes on a busy machine do not count)
    f = read_proben1(path)
    elapsed = time.process_time() - t0
    assert f.X.shape == (8124, 125)
    assert elapsed < 1.0, f"reading mushroom1.dt took {elapsed:.2f} CPU s"


# ---------------------------------------------------------------------------- doctests


@pytest.mark.parametrize("module", ["_format", "_registry", "_proben1", "_synthetic",
                                    "_dataset", "_fetch", "_preprocess"])
def test_docstring_examples(module):
    import importlib

    mod = importlib.import_module(f"fastnet.datasets.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_public_api():
    for name in fd.__all__:
        assert hasattr(fd, name), name
