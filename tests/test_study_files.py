"""A study's files: every chunk of trials checked against the digest written with it, an
output directory that is the study's own (never the working directory or another folder),
and SIGTERM handled as Ctrl-C is."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from fastnet import cli
from fastnet.study import Study, run_study


def tiny_study():
    return Study("xor", ("rprop+",), trials=12, limit=60, seed=2)


def rewrite(path, **columns):
    """Rewrite a chunk file with some columns (or its header) replaced, as an editor would."""
    data = dict(np.load(path))
    data.update(columns)
    with open(path, "wb") as f:
        np.savez(f, **data)


def the_chunk(out):
    (path,) = (out / "trials").glob("*/*.npz")
    return path


def one_less(v):
    """A trial's epochs one fewer (10 -> 9): a plausible edit."""
    v = v.copy()
    i = int(np.argmax(v))
    v[i] -= 1
    return v


def diverged_set(v):
    v = v.copy()
    v[0] = 1
    return v


@pytest.mark.parametrize("column, edit", [("epochs", one_less),
                                          ("traversals", lambda v: v + 81),
                                          ("diverged", diverged_set),
                                          ("cpu_time", lambda v: v * 0.5)])
def test_an_edited_chunk_is_refused_by_its_digest(tmp_path, column, edit):
    study = tiny_study()
    run_study(study, tmp_path, pictures=False)
    path = the_chunk(tmp_path)
    rewrite(path, **{column: edit(np.load(path)[column])})
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: its trials differ from the "
                                         r"digest its header records \(edited or corrupted"):
        run_study(study, tmp_path, pictures=False)


def test_the_command_names_an_edited_chunk(tmp_path, capsys):
    args = ["study", "xor", "-k", "12", "-T", "60", "-q", "--no-pictures", "-o", str(tmp_path)]
    assert cli.main(args) == 0
    path = the_chunk(tmp_path)
    rewrite(path, traversals=np.load(path)["traversals"] + 81)
    capsys.readouterr()
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    assert f"{path}: its trials differ from the digest" in err and "delete it" in err


def test_a_chunk_without_a_digest_is_trained_again(tmp_path):
    # (a chunk of fastnet 0.2.0: its header has no digest; docs/studies.md says so)
    study = tiny_study()
    first = run_study(study, tmp_path, pictures=False)
    path = the_chunk(tmp_path)
    head = json.loads(str(np.load(path)["head"][()]))
    assert re.fullmatch(r"[0-9a-f]{64}", head.pop("digest"))
    rewrite(path, head=np.array(json.dumps(head, sort_keys=True)),
            epochs=one_less(np.load(path)["epochs"]))
    lines = []
    again = run_study(study, tmp_path, pictures=False, progress=lines.append)
    assert [line.kind for line in lines][:1] == ["start"]          # (nothing resumed)
    assert np.array_equal(first.algorithms[0].epochs, again.algorithms[0].epochs)
    assert "digest" in json.loads(str(np.load(path)["head"][()]))


def test_an_empty_output_path_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("summary.md", "trials.csv"):
        (tmp_path / name).write_text("mine\n")
    code = cli.main(["study", "xor", "-k", "5", "-T", "20", "-q", "--no-pictures", "-o", ""])
    assert code == 1
    err = capsys.readouterr().err
    assert "`--out` must be a directory path, got '' (an empty path" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.md", "trials.csv"]
    assert (tmp_path / "summary.md").read_text() == "mine\n"
    with pytest.raises(ValueError, match=r"`out` must be a directory path, got ''"):
        run_study(tiny_study(), "")


def test_a_directory_that_is_not_a_studys_is_refused(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.md").write_text("my notes\n")
    code = cli.main(["study", "xor", "-k", "5", "-T", "20", "-q", "--no-pictures",
                     "-o", str(mine)])
    assert code == 1
    err = capsys.readouterr().err
    assert (f"`--out` '{mine}' must be a study's directory (empty, or holding the .fastnet-study "
            "file a study writes), got a directory holding summary.md") in err
    assert [p.name for p in mine.iterdir()] == ["summary.md"]
    assert (mine / "summary.md").read_text() == "my notes\n"
    # a file is no directory
    (tmp_path / "notes").write_text("x")
    with pytest.raises(ValueError, match=r"`out` '.*notes' must be a directory \(or absent\)"):
        run_study(tiny_study(), tmp_path / "notes")


def test_a_studys_directory_is_resumed(tmp_path):
    study = tiny_study()
    out = tmp_path / "s"
    run_study(study, out, pictures=False)
    assert (out / ".fastnet-study").is_file()
    run_study(study, out, pictures=False)                  # (its marker: resumed)
    # a study written before the marker existed: its study.json, or its chunks
    (out / ".fastnet-study").unlink()
    run_study(study, out, pictures=False)
    for name in (".fastnet-study", "study.json", "summary.md", "trials.csv", "study.html"):
        if (out / name).exists():
            (out / name).unlink()
    run_study(study, out, pictures=False)
    assert (out / ".fastnet-study").is_file()


def _children(pid):
    """The pids of the processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow  # 8.8 s on a loaded two-core machine (--durations): four Python starts
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_a_study_as_ctrl_c_does(tmp_path):
    # (SIGTERM killed it at once, status 143 and no word: its lock left, its two workers
    # orphaned and training for seconds)
    out = tmp_path / "s"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "fastnet", "study", "xor", "-k", "1000000",
                             "-T", "1000", "-j", "2", "--no-pictures", "-o", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(out.glob("trials/*/*.npz")):
            assert proc.poll() is None and time.monotonic() < deadline, "no chunk was written"
            time.sleep(0.01)
        workers = _children(proc.pid)
        assert workers, "the study runs in worker processes"
        proc.send_signal(signal.SIGTERM)
        err = proc.communicate(timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert (f"fastnet: interrupted; the finished chunks of trials are saved in {out}: rerun the "
            "same command to resume.") in err
    assert "fastnet: stopped by SIGTERM (exit status 143)." in err
    assert not (out / "study.json.lock").exists()
    chunks = sorted(p.name for p in out.glob("trials/*/*.npz"))
    deadline = time.monotonic() + 2
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(map(_alive, workers)), "a worker outlived the study"
    assert sorted(p.name for p in out.glob("trials/*/*.npz")) == chunks
