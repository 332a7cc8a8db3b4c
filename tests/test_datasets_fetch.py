"""fetch_proben1 offline: file:// URLs to archives built here; corrupt archives install nothing."""

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

# (the shipped checksums and the downloader patched here: no public face)
import fastnet.datasets._fetch as fetch_mod
from fastnet.datasets import (
    PROBEN1_PROBLEMS,
    FetchError,
    fetch_proben1,
    find_proben1_file,
    load_proben1,
    verify_proben1,
)

FAKE = {"toy1.dt": b"first file\n", "toy2.dt": b"second file\n"}


def _add(tf, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def make_tar(path, members, mode="w:gz"):
    """Write a tar archive with members ``{archive path: bytes}`` plus a directory and a README."""
    kwargs = {"compresslevel": 1} if mode == "w:gz" else {}
    with tarfile.open(path, mode, **kwargs) as tf:
        d = tarfile.TarInfo("proben1")
        d.type = tarfile.DIRTYPE
        tf.addfile(d)
        _add(tf, "proben1/README", b"not a data file\n")
        for name, data in members.items():
            _add(tf, name, data)
    return path


def leftovers(parent):
    return sorted(p.name for p in parent.iterdir() if ".fetch-" in p.name)


@pytest.fixture
def fake_table(monkeypatch):
    """Pretend the Proben1 set is two tiny files (tests that need no real data)."""
    table = {name: hashlib.sha256(data).hexdigest() for name, data in FAKE.items()}
    monkeypatch.setattr(fetch_mod, "PROBEN1_SHA256", table)
    return table


@pytest.fixture
def fake_archive(tmp_path, fake_table):
    return make_tar(tmp_path / "toy.tar.gz", {f"proben1/toy/{n}": d for n, d in FAKE.items()})


# ------------------------------------------------------------- without the real data


def test_fetch_installs_flat_and_verifies(tmp_path, fake_archive):
    target = tmp_path / "cache" / "proben1"
    assert fetch_proben1(fake_archive.as_uri(), root=target) == target
    assert {p.name: p.read_bytes() for p in target.iterdir()} == FAKE
    assert verify_proben1(target) == {}
    assert leftovers(target.parent) == []


def test_complete_target_is_not_downloaded_again(tmp_path, fake_archive):
    target = tmp_path / "data"
    fetch_proben1(fake_archive.as_uri(), root=target)
    missing_url = (tmp_path / "gone.tar.gz").as_uri()
    assert fetch_proben1(missing_url, root=target) == target   # nothing fetched
    with pytest.raises(FetchError, match=r"could not download the Proben1 archive from file:"):
        fetch_proben1(missing_url, root=target, force=True)


def test_existing_target_keeps_other_files_and_repairs_damaged_ones(tmp_path, fake_archive):
    target = tmp_path / "data"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    (target / "toy1.dt").write_bytes(b"damaged\n")
    assert verify_proben1(target) == {"toy1.dt": "checksum mismatch", "toy2.dt": "missing"}
    fetch_proben1(fake_archive.as_uri(), root=target)
    assert verify_proben1(target) == {}
    assert (target / "notes.txt").read_text() == "mine\n"
    assert leftovers(tmp_path) == []


def test_default_root_is_the_user_cache(tmp_path, fake_archive, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    target = fetch_proben1(fake_archive.as_uri())
    assert target == tmp_path / "xdg" / "fastnet" / "proben1"
    assert (target / "toy2.dt").read_bytes() == FAKE["toy2.dt"]


def test_zip_archives_work(tmp_path, fake_table):
    archive = tmp_path / "toy.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in FAKE.items():
            zf.writestr(f"proben1-master/toy/{name}", data)
    fetch_proben1(archive.as_uri(), root=tmp_path / "data")
    assert verify_proben1(tmp_path / "data") == {}


def _assert_nothing_installed(tmp_path, target):
    assert not target.exists()
    assert leftovers(target.parent) == []


def test_truncated_archive(tmp_path, fake_archive):
    data = fake_archive.read_bytes()
    bad = tmp_path / "truncated.tar.gz"
    bad.write_bytes(data[: len(data) // 2])
    target = tmp_path / "data"
    with pytest.raises(FetchError, match=r"corrupt or not a tar/zip archive"):
        fetch_proben1(bad.as_uri(), root=target)
    _assert_nothing_installed(tmp_path, target)


def test_not_an_archive(tmp_path, fake_table):
    bad = tmp_path / "page.html"
    bad.write_bytes(b"<html>404 Not Found</html>\n" * 50)
    target = tmp_path / "data"
    with pytest.raises(FetchError, match=r"corrupt or not a tar/zip archive"):
        fetch_proben1(bad.as_uri(), root=target)
    _assert_nothing_installed(tmp_path, target)


def test_checksum_mismatch_installs_nothing(tmp_path, fake_table):
    archive = make_tar(tmp_path / "evil.tar", {"a/toy1.dt": FAKE["toy1.dt"],
                                               "a/toy2.dt": b"second fil3\n"}, mode="w")
    target = tmp_path / "data"
    with pytest.raises(FetchError, match=r"SHA-256 mismatch for 1 Proben1 file\(s\) .*: "
                       r"toy2\.dt; .*Nothing was installed"):
        fetch_proben1(archive.as_uri(), root=target)
    _assert_nothing_installed(tmp_path, target)


def test_failed_fetch_leaves_an_existing_target_untouched(tmp_path, fake_table):
    target = tmp_path / "data"
    target.mkdir()
    (target / "toy1.dt").write_bytes(b"old\n")
    archive = make_tar(tmp_path / "evil.tar", {"toy1.dt": FAKE["toy1.dt"],
                                               "toy2.dt": b"wrong\n"}, mode="w")
    with pytest.raises(FetchError, match=r"mismatch .*toy2\.dt"):
        fetch_proben1(archive.as_uri(), root=target)
    assert [p.name for p in target.iterdir()] == ["toy1.dt"]
    assert (target / "toy1.dt").read_bytes() == b"old\n"      # not replaced by the good copy
    assert leftovers(tmp_path) == []


def test_a_good_copy_later_in_the_archive_is_used(tmp_path, fake_table):
    archive = make_tar(tmp_path / "two.tar", {"old/toy1.dt": b"stale\n",
                                              "new/toy1.dt": FAKE["toy1.dt"],
                                              "new/toy2.dt": FAKE["toy2.dt"]}, mode="w")
    fetch_proben1(archive.as_uri(), root=tmp_path / "data")
    assert verify_proben1(tmp_path / "data") == {}


def test_missing_member(tmp_path, fake_table):
    archive = make_tar(tmp_path / "short.tar.gz", {"p/toy1.dt": FAKE["toy1.dt"]})
    target = tmp_path / "data"
    with pytest.raises(FetchError, match=r"lacks 1 of the 45 Proben1 files: toy2\.dt"):
        fetch_proben1(archive.as_uri(), root=target)
    _assert_nothing_installed(tmp_path, target)


def test_archive_paths_are_never_used_for_writing(tmp_path, fake_table):
    archive = make_tar(tmp_path / "sneaky.tar", {"../../toy1.dt": FAKE["toy1.dt"],
                                                 "/abs/toy2.dt": FAKE["toy2.dt"]}, mode="w")
    target = tmp_path / "sub" / "data"
    fetch_proben1(archive.as_uri(), root=target)
    assert sorted(p.name for p in target.iterdir()) == ["toy1.dt", "toy2.dt"]
    assert not (tmp_path / "toy1.dt").exists()


def test_interrupted_download_leaves_nothing(tmp_path, fake_archive, monkeypatch):
    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch_mod, "_install", boom)  # dies after verifying, before installing
    target = tmp_path / "data"
    with pytest.raises(KeyboardInterrupt):
        fetch_proben1(fake_archive.as_uri(), root=target)
    _assert_nothing_installed(tmp_path, target)


@pytest.mark.parametrize("url, error, pattern", [
    ("/local/path/proben1.tar.gz", ValueError, r"`url` must be an http, https, ftp, file URL"),
    ("gopher://example.org/x", ValueError, r"`url` must be an http"),
    (b"file:///x", TypeError, r"`url` must be a string"),
])
def test_bad_url(tmp_path, url, error, pattern):
    with pytest.raises(error, match=pattern):
        fetch_proben1(url, root=tmp_path / "data")


# ----------------------------------------------------------------- with the real data


@pytest.fixture(scope="module")
def proben1_archive(tmp_path_factory, proben1_root):
    """proben1.tar.gz laid out like the original distribution (heart* in heart/)."""
    out = tmp_path_factory.mktemp("archive") / "proben1.tar.gz"
    with tarfile.open(out, "w:gz", compresslevel=1) as tf:
        for problem in PROBEN1_PROBLEMS.values():
            for k in (1, 2, 3):
                src = find_proben1_file(f"{problem.name}{k}", proben1_root)
                tf.add(src, arcname=f"proben1/{problem.directory}/{src.name}")
        _add(tf, "proben1/Makefile", b"first:\n")
    return out


def test_real_checksum_table_has_all_45_files():
    names = {f"{p}{k}.dt" for p in PROBEN1_PROBLEMS for k in (1, 2, 3)}
    assert set(fetch_mod.PROBEN1_SHA256) == names
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in fetch_mod.PROBEN1_SHA256.values())


def test_reference_copy_matches_the_checksums(proben1_root):
    for name, digest in fetch_mod.PROBEN1_SHA256.items():
        path = find_proben1_file(name[:-3], proben1_root)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, name


def test_fetch_real_archive_then_load(tmp_path, proben1_archive, monkeypatch):
    monkeypatch.delenv("FASTNET_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    target = fetch_proben1(proben1_archive.as_uri())
    assert len(list(target.glob("*.dt"))) == 45 and verify_proben1(target) == {}
    ds = load_proben1("heartac3")  # found in the cache
    assert ds.path == target / "heartac3.dt" and ds.n_train == 152
    assert leftovers(target.parent) == []


def test_real_archive_with_one_changed_byte(tmp_path, proben1_root):
    archive = tmp_path / "proben1.tar"
    with tarfile.open(archive, "w") as tf:
        for problem in PROBEN1_PROBLEMS.values():
            for k in (1, 2, 3):
                src = find_proben1_file(f"{problem.name}{k}", proben1_root)
                data = bytearray(src.read_bytes())
                if src.name == "glass2.dt":
                    i = data.index(b"0.", 200)
                    data[i] = ord("1")
                _add(tf, f"proben1/{problem.directory}/{src.name}", bytes(data))
    target = tmp_path / "data"
    with pytest.raises(FetchError, match=r"SHA-256 mismatch for 1 .*: glass2\.dt"):
        fetch_proben1(archive.as_uri(), root=target)
    _assert_nothing_installed(tmp_path, target)


# ------------------------------------------------------------------- through pooch


def test_http_and_ftp_downloads_go_through_pooch(tmp_path, fake_archive, monkeypatch):
    """pooch downloads (with the timeout asked for); the 45 files' checksums stay ours."""
    import pooch

    seen = []

    def retrieve(url, known_hash, fname, path, downloader, **kwargs):
        seen.append((url, known_hash, type(downloader).__name__, downloader))
        (Path(path) / fname).write_bytes(fake_archive.read_bytes())
        return str(Path(path) / fname)

    monkeypatch.setattr(pooch, "retrieve", retrieve)
    target = fetch_proben1("https://example.org/proben1.tar.gz", root=tmp_path / "a", timeout=7.5)
    assert verify_proben1(target) == {}
    fetch_proben1("ftp://example.org/proben1.tar.gz", root=tmp_path / "b", timeout=3.0)
    (url, known, kind, http), (_, _, kind2, ftp) = seen
    assert (url, known, kind, kind2) == ("https://example.org/proben1.tar.gz", None, "HTTPDownloader",
                                         "FTPDownloader")
    assert http.kwargs["timeout"] == 7.5 and ftp.timeout == 3.0


def test_pooch_errors_become_fetch_errors_and_pooch_stays_quiet(tmp_path, fake_table, monkeypatch, caplog):
    import pooch
    import requests

    def refuse(self, url, output_file, pooch_instance, check_only=False):
        raise requests.ConnectionError("connection refused")

    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", refuse)
    target = tmp_path / "data"
    with pytest.raises(FetchError, match=r"^could not download the Proben1 archive from "
                                         r"https://example\.org/p\.tar\.gz: connection refused$"):
        fetch_proben1("https://example.org/p.tar.gz", root=target)
    _assert_nothing_installed(tmp_path, target)
    level = pooch.get_logger().level
    archive = make_tar(tmp_path / "toy.tar.gz", {f"p/{n}": d for n, d in FAKE.items()})
    with caplog.at_level("INFO", logger="pooch"):
        fetch_proben1(archive.as_uri(), root=tmp_path / "ok")
    assert not [r for r in caplog.records if r.name == "pooch" and r.levelname == "INFO"]
    assert pooch.get_logger().level == level


def test_proben1_tests_skip_saying_how_to_get_the_data(tmp_path, monkeypatch):
    """Without data, Proben1 tests skip with `fastnet datasets fetch` / FASTNET_DATA, and
    find the data where `fastnet datasets fetch` puts it."""
    import conftest

    monkeypatch.setattr(conftest, "_SHARED_PROBEN1", tmp_path / "shared" / "proben1")
    monkeypatch.delenv("FASTNET_DATA", raising=False)
    monkeypatch.delenv("FASTNET_REQUIRE_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(pytest.skip.Exception, match=r"^needs the Proben1 data, which was not found: get "
                       r"it with `fastnet datasets fetch` .*or set FASTNET_DATA to a directory holding the "
                       r"\.dt files$"):
        conftest.proben1_root_or_skip()
    monkeypatch.setenv("FASTNET_REQUIRE_DATA", "1")
    with pytest.raises(pytest.fail.Exception, match="fastnet datasets fetch"):
        conftest.proben1_root_or_skip()
    cache = tmp_path / "xdg" / "fastnet" / "proben1"      # where `fastnet datasets fetch` installs
    cache.mkdir(parents=True)
    (cache / "cancer1.dt").write_text("")
    assert conftest.proben1_root_or_skip() == cache


def test_tests_without_data_are_summed_up_in_one_line(tmp_path):
    """(issue 46, item 18) The test command ended with a line per test that needs the data,
    each naming the folders searched (one of them beside the repository): now one line says
    how many tests need the data and how to get it; FASTNET_REQUIRE_DATA=1 still fails them."""
    import os
    import shutil
    import subprocess
    import sys

    import conftest

    tests = tmp_path / "repo" / "tests"
    tests.mkdir(parents=True)
    shutil.copy(conftest.__file__, tests / "conftest.py")
    (tests / "test_needs_data.py").write_text(
        "import pytest\n\n"
        "def test_a(proben1_root):\n    pass\n\n"
        "@pytest.mark.parametrize('k', [1, 2])\ndef test_b(proben1_root, k):\n    pass\n\n"
        "def test_c():\n    pytest.skip('another reason')\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "FASTNET_DATA": str(empty), "XDG_CACHE_HOME": str(empty),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("FASTNET_REQUIRE_DATA", None)
    run = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:randomly", str(tests)]
    out = subprocess.run(run, cwd=tmp_path / "repo", env=env, capture_output=True, text=True).stdout
    lines = [line for line in out.splitlines() if "Proben1" in line]
    assert len(lines) == 1, out
    assert lines[0].startswith("SKIPPED [3] tests/conftest.py:") and "fastnet datasets fetch" in lines[0]
    assert "FASTNET_DATA" in lines[0] and str(tmp_path) not in out and "shared" not in out
    assert "another reason" in out and "1 passed" not in out and "4 skipped" in out
    env["FASTNET_REQUIRE_DATA"] = "1"
    out = subprocess.run(run, cwd=tmp_path / "repo", env=env, capture_output=True, text=True).stdout
    assert "3 errors" in out and "FASTNET_REQUIRE_DATA is set" in out
