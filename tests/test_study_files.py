"""A study's files: every chunk of trials checked against the digest written with it."""
import json
import re

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
