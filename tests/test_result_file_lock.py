"""One writer per result file, a lock that dies with its process, ordinary file modes."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fastnet import MLP
from fastnet._files import atomic_write, exclusive_lock  # (the file helpers under test: internal)
from fastnet.exceptions import FileLockedError, ResultFileError


def bench_command(root, out, runs, problems=("cancer1", "glass1")):
    return [sys.executable, "-m", "fastnet", "bench", "-p", *problems, "-n", "pivot",
            "-r", str(runs), "-q", "--data", str(root), "-o", str(out)]


# A writer that cannot finish while the test runs (soybean1's 60 runs take seconds;
# 3000 of them minutes): the test stops it with SIGINT.
LONG_WRITER = dict(runs=3000, problems=("cancer1", "glass1", "soybean1"))


def _default_sigint():
    # A child inherits an ignored SIGINT (an earlier test's dask or loky machinery may
    # leave the test process ignoring it), and Python then never raises
    # KeyboardInterrupt: give the writer the ordinary disposition, as in a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(predicate, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def run_records(path):
    lines = Path(path).read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_refused_writer_leaves_the_holders_lock_alone(tmp_path):
    target = tmp_path / "r.jsonl"
    lock = tmp_path / "r.jsonl.lock"
    with exclusive_lock(target):
        assert lock.exists()
        assert lock.read_text().strip() == str(os.getpid())
        for _ in range(3):   # the old code's refused writer deleted the lock file here
            with pytest.raises(FileLockedError, match=rf"pid {os.getpid()}"):
                with exclusive_lock(target):
                    pass
            assert lock.exists()
    assert not lock.exists()          # the holder cleans up after itself
    with exclusive_lock(target):      # and the lock can be taken again
        pass
    assert issubclass(FileLockedError, ResultFileError)


@pytest.mark.slow  # 15.2 s on a loaded two-core machine (--durations)
def test_three_writers_one_file(proben1_root, tmp_path):
    # The reproducer: a long writer in the background, two more on the same file
    # while it runs. Both are refused (the old code's second writer deleted the
    # lock on its way out, so the third ran beside the first and duplicated runs).
    out = tmp_path / "x.jsonl"
    env = dict(os.environ, FASTNET_DATA=str(proben1_root))
    first = subprocess.Popen(bench_command(proben1_root, out, **LONG_WRITER), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=_default_sigint)
    try:
        assert wait_for(lambda: out.exists() and len(out.read_bytes().splitlines()) > 3)
        others = [subprocess.run(bench_command(proben1_root, out, **LONG_WRITER), env=env,
                                 capture_output=True, text=True, timeout=60)
                  for _ in range(2)]
        assert first.poll() is None, "the first writer finished too early for this test"
    finally:
        # Stop it: its records so far stay. A SIGINT that lands while Python runs a
        # finaliser is reported and ignored ("Exception ignored in ..."), as for any
        # program: send it again until the writer has stopped.
        deadline = time.monotonic() + 60
        while first.poll() is None and time.monotonic() < deadline:
            first.send_signal(signal.SIGINT)
            try:
                first.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        first.communicate(timeout=10)
    assert first.returncode == 130
    for other in others:
        assert other.returncode == 1
        assert "another process (pid" in other.stderr and "is writing" in other.stderr
    keys = [(r["problem"], r["network"], r["run"]) for r in run_records(out)]
    assert len(keys) == len(set(keys)) > 0
    assert not out.with_name("x.jsonl.lock").exists()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_killed_writers_lock_does_not_block_resume(proben1_root, tmp_path):
    out = tmp_path / "k.jsonl"
    runs = 30
    env = dict(os.environ, FASTNET_DATA=str(proben1_root))
    proc = subprocess.Popen(bench_command(proben1_root, out, runs), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: out.exists() and len(out.read_bytes().splitlines()) > 3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    resumed = subprocess.run(bench_command(proben1_root, out, runs), env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    keys = [(r["problem"], r["network"], r["run"]) for r in run_records(out)]
    assert len(keys) == len(set(keys)) == 2 * runs


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_get_the_ordinary_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "a.bin", [b"x"])
        MLP(2, (2,), 1).save(tmp_path / "net.npz")
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    want = 0o666 & ~umask
    assert (os.stat(tmp_path / "plain").st_mode & 0o777) == want
    for name in ("a.bin", "net.npz"):
        assert (os.stat(tmp_path / name).st_mode & 0o777) == want, name


def test_result_file_mode_and_missing_directory(proben1_root, tmp_path):
    from fastnet.experiment import Experiment, run_experiment

    exp = Experiment(problems=["cancer1"], networks=["linear"], runs=1, root=proben1_root,
                     options={"max_epochs": 5})
    old = os.umask(0o022)
    try:
        run_experiment(exp, tmp_path / "r.jsonl")
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "r.jsonl").st_mode & 0o777) == 0o644
    with pytest.raises(FileNotFoundError, match="no such directory"):
        run_experiment(exp, tmp_path / "missing" / "deeper" / "r.jsonl")
    assert not (tmp_path / "missing").exists()


def test_atomic_write_leaves_the_old_file_on_failure(tmp_path):
    target = tmp_path / "f"
    atomic_write(target, [b"old"])

    def fail(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(target, fail)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]   # no temporary file left
    np.testing.assert_equal(np.frombuffer(target.read_bytes(), dtype=np.uint8).size, 3)


def test_lock_refuses_a_symlink_and_leaves_its_target_alone(tmp_path):
    # `ln -s ~/victim d/r.jsonl.lock`: the lock used to follow the link and write its
    # pid over the victim.
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    lock = tmp_path / "r.jsonl.lock"
    lock.symlink_to(victim)
    with pytest.raises(ResultFileError, match=r"r\.jsonl\.lock: the lock file is a symbolic "
                                              r"link \(to '.*victim'\); .*remove it"):
        with exclusive_lock(tmp_path / "r.jsonl"):
            pass
    assert victim.read_bytes() == b"precious\n" and lock.is_symlink()
    # a dangling link is refused too (O_CREAT would have created its target)
    lock.unlink()
    lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ResultFileError, match="is a symbolic link"):
        with exclusive_lock(tmp_path / "r.jsonl"):
            pass
    assert not (tmp_path / "elsewhere").exists()


def test_lock_refuses_a_hard_link_a_fifo_and_a_directory(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    os.link(victim, tmp_path / "a.jsonl.lock")
    with pytest.raises(ResultFileError, match=r"a\.jsonl\.lock: the lock file has 2 names "
                                              r"\(a hard link\)"):
        with exclusive_lock(tmp_path / "a.jsonl"):
            pass
    assert victim.read_bytes() == b"precious\n"
    os.mkfifo(tmp_path / "b.jsonl.lock")
    with pytest.raises(ResultFileError, match=r"b\.jsonl\.lock: the lock file is not a "
                                              "regular file"):
        with exclusive_lock(tmp_path / "b.jsonl"):
            pass
    (tmp_path / "c.jsonl.lock").mkdir()
    with pytest.raises(ResultFileError, match=r"c\.jsonl\.lock: the lock file is a directory"):
        with exclusive_lock(tmp_path / "c.jsonl"):
            pass
