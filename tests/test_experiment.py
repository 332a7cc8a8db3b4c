"""Experiments: seeds, result files, resume after a kill, repair, and backends.

Every experiment here is tiny (cancer1/glass1, a few runs, multilayer runs capped
at a few hundred epochs) so that the whole file runs in a few seconds.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from fastnet.experiment import (
    Experiment,
    MIXED_BLOCK,
    ResultFileError,
    ResultFileWarning,
    TIMING_FIELDS,
    build_network,
    expand_problems,
    read_results,
    run_experiment,
    run_seed,
    strip_timing,
)

import fastnet
from _extras import needs

# Subprocesses must import the same fastnet as this process (the in-place build
# under src/ or the installed package).
FASTNET_PARENT = str(Path(fastnet.__file__).resolve().parents[1])


def _experiment(root, **kw):
    args = dict(problems=("cancer1", "glass1"), networks=("linear", "pivot"), runs=3, seed=7,
                options={"max_epochs": 200}, root=str(root))
    args.update(kw)
    return Experiment(**args)


def _records(path):
    """Run records minus timing, sorted by run identity."""
    rf = read_results(path)
    return sorted((strip_timing(r) for r in rf.records),
                  key=lambda r: (r["problem"], r["network"], r["run"]))


@pytest.fixture(scope="module")
def reference(proben1_root, tmp_path_factory):
    """The uninterrupted, sequential run of `_experiment` (computed once)."""
    path = tmp_path_factory.mktemp("ref") / "ref.jsonl"
    res = run_experiment(_experiment(proben1_root), path)
    assert res.n_new == 12 and res.n_resumed == 0 and res.backend == "sequential"
    return path


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = FASTNET_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    return env


# --------------------------------------------------------------------------- names and seeds

def test_expand_problems():
    assert expand_problems("cancer") == ("cancer1", "cancer2", "cancer3")
    assert expand_problems(["glass1a", "glass1d", "cancer1"]) == ("glass1", "glass1d", "cancer1")
    assert len(expand_problems("all")) == 45
    with pytest.raises(ValueError, match="valid problems are building, cancer"):
        expand_problems(["nosuch1"])


def test_network_names_and_presets(proben1_root):
    from fastnet.datasets import load_proben1

    ds = load_proben1("cancer1", proben1_root)
    net, preset = build_network("linear", ds)
    assert net.hidden == () and preset == "proben1-linear" and net.n_connections == 20
    net, preset = build_network("pivot", ds)
    assert net.proben1_spec == "4+2 l" and net.shortcut and net.n_connections == 100
    assert preset == "proben1-multilayer"
    net, _ = build_network("noshortcut", ds)
    assert net.proben1_spec == "4+2 l" and not net.shortcut
    net, _ = build_network("8+4 S", ds)
    assert net.proben1_spec == "8+4 s" and net.shortcut
    with pytest.raises(ValueError, match="no pivot architecture"):
        build_network("pivot", load_proben1("mushroom1", proben1_root))
    with pytest.raises(ValueError, match="neither one of linear, pivot, noshortcut"):
        Experiment(problems="cancer1", networks=("huge",))
    assert Experiment(problems="cancer1", networks=("0+0 l", "linear")).networks == ("linear",)


def test_experiment_validation():
    with pytest.raises(ValueError, match="`runs` must be from 1 to 10000"):
        Experiment(problems="cancer1", runs=0)
    with pytest.raises(ValueError, match="`options` has unknown keys"):
        Experiment(problems="cancer1", options={"learning_rate": 0.1})
    with pytest.raises(ValueError, match="multiple of the strip length 5"):
        Experiment(problems="cancer1", options={"max_epochs": 203})
    with pytest.raises(ValueError, match="at most Proben1's 3000"):
        Experiment(problems="cancer1", options={"max_epochs": 5000})
    with pytest.raises(TypeError, match="`keep_predictions` must be a bool"):
        Experiment(problems="cancer1", keep_predictions="yes")


def test_run_seed_depends_on_identity_only():
    a = run_seed(3, "cancer1", "pivot", 5).generate_state(4)
    assert np.array_equal(a, run_seed(3, "cancer1", "pivot", 5).generate_state(4))
    for other in (run_seed(4, "cancer1", "pivot", 5), run_seed(3, "cancer2", "pivot", 5),
                  run_seed(3, "cancer1", "linear", 5), run_seed(3, "cancer1", "pivot", 6)):
        assert not np.array_equal(a, other.generate_state(4))
    # the identity, not the grid: the same run in a bigger experiment has the same seed
    small = Experiment(problems="cancer1", runs=2).run_keys()
    big = Experiment(problems=("glass1", "cancer1"), runs=9).run_keys()
    assert set(small) <= set(big)


# --------------------------------------------------------------------------- the file

def test_file_layout(reference):
    lines = reference.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "header" and header["format"] == "fastnet-results"
    for key in ("checklist", "version", "machine", "build", "kernels_sha256", "data", "identity",
                "grid"):
        assert key in header
    cell = header["checklist"]["cancer1/pivot"]
    assert cell["network"]["n_connections"] == 100 and cell["preset"] == "proben1-multilayer"
    assert cell["parameters"]["eta_plus"] == 1.2 and cell["max_epochs"] == 200
    assert cell["stopping"] == "((GL2 or P<0.1 or max_epochs) or max_epochs)"   # with the cap
    assert header["identity"]["multilayer_rule"] == "tables"
    assert header["data"]["cancer1"]["matches_published"] is True
    assert len(header["data"]["cancer1"]["sha256"]) == 64
    recs = [json.loads(x) for x in lines[1:]]
    assert len(recs) == 12
    r = recs[0]
    for key in ("setup_hash", "problem", "network", "run", "seed", "train", "val", "test",
                "epochs", "relevant_epoch", "stop_reason", "gl_end", "traversals", "cpu_time"):
        assert key in r
    assert r["setup_hash"] == header["setup_hash"]
    assert set(r["test"]) == {"squared_error_percentage", "classification_error", "nmse"}
    assert 0.0 < r["test"]["nmse"] < 2.0           # Lawrence et al.'s NMSE of the test set
    assert r["traversals"]["total"] > 0 and "test_predictions" not in r
    # the epoch cap joins the stopping rule: capped runs stop by it, at a strip end
    assert "max_epochs" in cell["stopping"]
    capped = [x for x in recs if x["epochs"] == 200]
    assert all(x["stop_reason"] == "max_epochs" for x in capped)
    assert all(x["epochs"] <= 200 and x["epochs"] % 5 == 0 for x in recs)


def test_an_epoch_cap_stops_runs_by_its_name(proben1_root, tmp_path):
    # A cap of 5 epochs: no criterion can fire at the first strip end (GL is 0 there,
    # P5 is large), so every run stops by the cap, named as such.
    exp = Experiment(problems=["cancer1"], networks=["pivot", "linear"], runs=3,
                     root=proben1_root, options={"max_epochs": 5})
    res = run_experiment(exp, tmp_path / "cap.jsonl")
    assert [r["stop_reason"] for r in res.records] == ["max_epochs"] * 6
    assert all(r["epochs"] == 5 for r in res.records)


def test_rerun_is_a_no_op(reference, proben1_root, tmp_path):
    path = tmp_path / "copy.jsonl"
    path.write_bytes(reference.read_bytes())
    res = run_experiment(_experiment(proben1_root), path)
    assert res.n_new == 0 and res.n_resumed == 12
    assert path.read_bytes() == reference.read_bytes()


def test_resume_extends_grid(reference, proben1_root, tmp_path):
    path = tmp_path / "grow.jsonl"
    run_experiment(_experiment(proben1_root, problems=("cancer1",), networks=("linear",), runs=2),
                   path)
    res = run_experiment(_experiment(proben1_root), path)
    assert (res.n_new, res.n_resumed) == (10, 2)
    assert _records(path) == _records(reference)
    assert read_results(path).header["grid"] == {"problems": ["cancer1", "glass1"],
                                                 "networks": ["linear", "pivot"], "runs": 3}


def test_resume_on_another_build_warns(reference, proben1_root, tmp_path):
    lines = reference.read_text().splitlines()
    header = json.loads(lines[0])
    header["kernels_sha256"] = "0" * 16
    path = tmp_path / "old-build.jsonl"
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    with pytest.warns(ResultFileWarning, match="compiled kernels differ"):
        res = run_experiment(_experiment(proben1_root), path)
    assert res.n_new == 0


def test_header_mismatch_is_an_error(reference, proben1_root, tmp_path):
    path = tmp_path / "copy.jsonl"
    path.write_bytes(reference.read_bytes())
    with pytest.raises(ResultFileError, match="different set-up.*seed: file has 7, this experiment 8"):
        run_experiment(_experiment(proben1_root, seed=8), path)
    with pytest.raises(ResultFileError, match="options"):
        run_experiment(_experiment(proben1_root, options={"max_epochs": 100}), path)
    assert path.read_bytes() == reference.read_bytes()


def test_partial_last_line_is_repaired(reference, proben1_root, tmp_path):
    data = reference.read_bytes()
    lines = data.split(b"\n")
    path = tmp_path / "crash.jsonl"
    # header + 5 complete records + half of the 6th (a crash in the middle of a write)
    path.write_bytes(b"\n".join(lines[:6]) + b"\n" + lines[6][: len(lines[6]) // 2])
    with pytest.warns(ResultFileWarning, match="incomplete"):
        rf = read_results(path)
    assert len(rf.records) == 5 and rf.partial_bytes > 0
    with pytest.warns(ResultFileWarning, match="cut off an incomplete last line"):
        res = run_experiment(_experiment(proben1_root), path)
    assert (res.n_new, res.n_resumed) == (7, 5)
    assert _records(path) == _records(reference)
    assert path.read_bytes().endswith(b"\n")


def test_corrupt_complete_line_is_an_error_never_dropped(reference, proben1_root, tmp_path):
    lines = reference.read_bytes().split(b"\n")
    path = tmp_path / "corrupt.jsonl"
    lines[3] = lines[3][:40]  # a complete (newline-terminated) but broken record
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    with pytest.raises(ResultFileError, match=r"corrupt.jsonl:4: a record is not valid JSON"):
        read_results(path)
    with pytest.raises(ResultFileError, match=r":4:"):
        run_experiment(_experiment(proben1_root), path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("content, match", [
    (b"", "empty"),
    (b'{"type": "header", "format": "something-else"}\n', "not a fastnet result file"),
    (b"not json\n", "header is not valid JSON"),
    (b'{"type":"header"', "no complete header line"),
])
def test_malformed_files(tmp_path, content, match):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ResultFileError, match=match):
        read_results(path)


def test_concurrent_writer_is_refused(reference, proben1_root, tmp_path):
    import fcntl

    path = tmp_path / "locked.jsonl"
    path.write_bytes(reference.read_bytes())
    fd = os.open(str(path) + ".lock", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(ResultFileError, match="another process is writing"):
            run_experiment(_experiment(proben1_root), path)
    finally:
        os.close(fd)


def test_predictions_kept_on_request(proben1_root, tmp_path):
    path = tmp_path / "pred.jsonl"
    res = run_experiment(Experiment(problems=("cancer1",), networks=("linear",), runs=1,
                                    keep_predictions=True, root=str(proben1_root)), path)
    r = res.records[0]
    assert len(r["test_predictions"]) == 174 and set(r["test_wrong"]) <= {"0", "1"}
    wrong = 100 * r["test_wrong"].count("1") / 174
    assert wrong == pytest.approx(r["test"]["classification_error"])


def test_missing_data_says_how_to_fetch(tmp_path):
    exp = Experiment(problems="cancer1", root=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="fastnet datasets fetch"):
        run_experiment(exp, tmp_path / "r.jsonl")
    assert not (tmp_path / "r.jsonl").exists()


# --------------------------------------------------------------------------- backends

def test_same_records_with_local_processes(reference, proben1_root, tmp_path):
    path = tmp_path / "loky.jsonl"
    seen = []
    res = run_experiment(_experiment(proben1_root), path, jobs=2, progress=seen.append)
    assert res.backend == "loky"
    assert _records(path) == _records(reference)
    assert [p.done for p in seen] == list(range(1, 13)) and seen[-1].eta == 0
    assert np.isfinite(seen[-1].median_test_error)


def test_same_records_on_dask_cluster(reference, proben1_root, tmp_path):
    distributed = needs("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:  # (None takes 8787)
        path = tmp_path / "dask-address.jsonl"
        res = run_experiment(_experiment(proben1_root), path, scheduler=cluster.scheduler_address)
        assert res.backend == "dask"
        assert _records(path) == _records(reference)
        # a client object works too, and resumes a half-done file
        half = tmp_path / "dask-client.jsonl"
        run_experiment(_experiment(proben1_root, problems=("glass1",)), half)
        with distributed.Client(cluster) as client:
            res = run_experiment(_experiment(proben1_root), half, scheduler=client)
        assert (res.n_new, res.n_resumed) == (6, 6)
        assert _records(half) == _records(reference)


@pytest.mark.slow  # 10.0 s on a loaded two-core machine (--durations)
def test_unreachable_scheduler(proben1_root, tmp_path, monkeypatch):
    needs("dask.distributed")
    # (the module that reads the constant: setting the re-exported name changes nothing)
    from fastnet.experiment import _workers

    monkeypatch.setattr(_workers, "SCHEDULER_TIMEOUT", 1.0)
    with pytest.raises(ConnectionError, match="could not reach a Dask scheduler .* within 1 s"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # distributed's own connection chatter
            run_experiment(_experiment(proben1_root), tmp_path / "r.jsonl",
                           scheduler="tcp://127.0.0.1:9")


def test_malformed_scheduler_address(proben1_root, tmp_path, monkeypatch):
    # refused before a Client is made (one that fails on its address is left half
    # made, and its clean-up at exit waits 20 s)
    distributed = needs("dask.distributed")

    def no_client(*args, **kwargs):
        raise AssertionError("a Client was made for a malformed address")

    monkeypatch.setattr(distributed, "Client", no_client)
    for address in ("local", "tcp://host", "host:port"):
        with pytest.raises(ValueError, match="`scheduler` must be a Dask scheduler address"):
            run_experiment(_experiment(proben1_root), tmp_path / "r.jsonl", scheduler=address)
    assert not (tmp_path / "r.jsonl").exists()


# --------------------------------------------------------------------------- killed runs

_SELF_KILL = textwrap.dedent("""
    import os, signal, sys
    import fastnet.experiment as fe
    from fastnet.experiment import _runner
    exp = fe.Experiment(problems=("cancer1", "glass1"), networks=("linear", "pivot"), runs=3,
                        seed=7, options={"max_epochs": 200}, root=sys.argv[1])
    real_write = _runner._write_record
    count = [0]
    def write(fd, line):
        count[0] += 1
        if count[0] == 6:                 # die in the middle of writing the 6th record
            os.write(fd, line[: len(line) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        real_write(fd, line)
    _runner._write_record = write
    fe.run_experiment(exp, sys.argv[2])
""")


def test_killed_mid_write_then_rerun_equals_uninterrupted(reference, proben1_root, tmp_path):
    path = tmp_path / "killed.jsonl"
    proc = subprocess.run([sys.executable, "-c", _SELF_KILL, str(proben1_root), str(path)],
                          env=_env(), capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    data = path.read_bytes()
    assert data.count(b"\n") == 6 and not data.endswith(b"\n")  # header + 5, then half a line
    with pytest.warns(ResultFileWarning):
        res = run_experiment(_experiment(proben1_root), path)
    assert (res.n_new, res.n_resumed) == (7, 5)
    assert _records(path) == _records(reference)


def test_cli_bench_killed_by_signal_then_resumed(proben1_root, tmp_path):
    """`fastnet bench -j 2` killed with SIGKILL part-way, rerun: same records as a clean run."""
    exp = dict(problems=("cancer1", "glass1"), networks=("pivot",), runs=12, seed=3,
               options={"max_epochs": 600}, root=str(proben1_root))
    path = tmp_path / "bench.jsonl"
    cmd = [sys.executable, "-m", "fastnet", "bench", "-p", "cancer1", "glass1", "-n", "pivot",
           "-r", "12", "--seed", "3", "--max-epochs", "600", "--data", str(proben1_root),
           "-j", "2", "-o", str(path)]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and path.read_bytes().count(b"\n") >= 4:  # header + 3 runs
                break
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)  # the command and its worker processes
    finally:
        proc.wait(timeout=30)
    n_before = path.read_bytes().count(b"\n") - 1
    assert 3 <= n_before < 24, n_before  # killed part-way
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResultFileWarning)  # a partial line may or may not exist
        resumed = run_experiment(Experiment(**exp), path)
    assert resumed.n_resumed == n_before and resumed.n_resumed + resumed.n_new == 24
    clean = tmp_path / "clean.jsonl"
    run_experiment(Experiment(**exp), clean)
    assert _records(path) == _records(clean)
    assert all(set(TIMING_FIELDS) <= set(r) for r in read_results(path).records)


def test_batched_runs_equal_one_call_per_run(proben1_root, tmp_path):
    # Runs of a cell train together in train_rprop_many; --batch-size 1 trains one
    # train_rprop call per run. Same runs, to rounding; same stops.
    batched = run_experiment(_experiment(proben1_root), tmp_path / "b.jsonl")
    single = run_experiment(_experiment(proben1_root), tmp_path / "s.jsonl", batch_size=1)
    assert {r["batch"]["method"] for r in single.records} == {"train_rprop"}
    assert {r["batch"]["runs"] for r in batched.records} == {3}
    for a, b in zip(batched.records, single.records):
        assert (a["problem"], a["network"], a["run"]) == (b["problem"], b["network"], b["run"])
        assert (a["epochs"], a["relevant_epoch"], a["stop_reason"]) == \
               (b["epochs"], b["relevant_epoch"], b["stop_reason"])
        assert a["traversals"] == b["traversals"]
        for part in ("train", "val", "test"):
            assert a[part]["squared_error_percentage"] == pytest.approx(
                b[part]["squared_error_percentage"], rel=1e-9)
            assert a[part]["classification_error"] == b[part]["classification_error"]
    with pytest.raises(ValueError, match="`batch_size`"):
        run_experiment(_experiment(proben1_root), tmp_path / "x.jsonl", batch_size=0)


@pytest.mark.slow  # 7.2 s on a loaded two-core machine (--durations)
def test_records_independent_of_batch_composition_resume_and_jobs(proben1_root, tmp_path):
    """A record is the same bits whichever runs share its task: batch sizes, resume
    points (mid-block too) and -j. horse1/pivot (1793 connections, past the narrow
    lanes' limit) trains in method "mixed", whose hand-off of a run to the
    single-network kernels depends on when the other runs of its call stop (in batches
    of 16 and 4, 9 to 16 of these records differed by ~1e-15): its runs train in fixed
    blocks of MIXED_BLOCK by run index, the last one up to the last run."""
    B = MIXED_BLOCK
    exp = dict(problems=("cancer1", "horse1"), networks=("linear", "pivot"), runs=B + 5,
               seed=0, options={"max_epochs": 300}, root=str(proben1_root))
    ref_path = tmp_path / "ref.jsonl"
    run_experiment(Experiment(**exp), ref_path)
    want = _records(ref_path)
    mixed = [r["batch"] for r in read_results(ref_path).records
             if (r["problem"], r["network"]) == ("horse1", "pivot")]
    assert [(b["method"], b.get("first_run"), b["runs"]) for b in mixed] == \
        [("mixed", 0, B)] * B + [("mixed", B, 5)] * 5
    assert any(b["handoffs"] for b in mixed)        # runs were handed on
    assert {r["batch"]["method"] for r in read_results(ref_path).records
            if r["problem"] == "cancer1"} == {"lanes"}
    for bs in (7, 3, 2 * B + 5):
        run_experiment(Experiment(**exp), tmp_path / f"b{bs}.jsonl", batch_size=bs)
        assert _records(tmp_path / f"b{bs}.jsonl") == want, bs
    # whole blocks do not depend on the number of runs (the last, partial one does)
    run_experiment(Experiment(**{**exp, "runs": B}), tmp_path / "B.jsonl")
    assert _records(tmp_path / "B.jsonl") == [r for r in want if r["run"] < B]
    lines = ref_path.read_bytes().splitlines(keepends=True)
    order = [(r["problem"], r["network"], r["run"]) for r in map(json.loads, lines[1:])]
    # horse1/pivot comes first: cut in its first block, in its second, or after it
    assert order[:B + 5] == [("horse1", "pivot", r) for r in range(B + 5)]
    n = 4 * (B + 5)
    for keep, jobs in ((5, 1), (B + 3, 2), (B + 12, 1)):
        path = tmp_path / f"k{keep}.jsonl"
        path.write_bytes(b"".join(lines[:1 + keep]))
        res = run_experiment(Experiment(**exp), path, jobs=jobs)
        assert (res.n_resumed, res.n_new) == (keep, n - keep)
        assert _records(path) == want, (keep, jobs)


def test_mixed_cell_tasks_are_whole_blocks(proben1_root):
    """A task of a "mixed" cell trains whole blocks (the last up to the last run) and
    writes only its missing runs; ``batch_size`` groups whole blocks (at least one a
    task); 1 is one call per run; "lanes" cells go by ``batch_size`` alone."""
    from fastnet.datasets import load_proben1
    from fastnet.experiment._runner import _tasks   # the runner's task plan: no public face

    B = MIXED_BLOCK
    exp = Experiment(problems="horse1", networks=("linear", "pivot"), runs=2 * B + 10,
                     seed=0, root=str(proben1_root))
    datasets = {"horse1": load_proben1("horse1", str(proben1_root))}
    todo = [("horse1", n, r, "rprop+") for n in ("linear", "pivot")
            for r in (3, 4, B + 1, 2 * B, 2 * B + 7)]
    tasks = _tasks(exp, todo, datasets, 16, "h")
    assert [(t.network, t.method, t.runs, t.blocks) for t in tasks] == [
        ("linear", "lanes", (3, 4, B + 1, 2 * B, 2 * B + 7), ()),
        ("pivot", "mixed", (3, 4), ((0, B),)), ("pivot", "mixed", (B + 1,), ((B, 2 * B),)),
        ("pivot", "mixed", (2 * B, 2 * B + 7), ((2 * B, 2 * B + 10),))]
    tasks = _tasks(exp, todo, datasets, 2 * B + 1, "h")
    assert [(t.runs, t.blocks) for t in tasks if t.network == "pivot"] == [
        ((3, 4, B + 1), ((0, B), (B, 2 * B))), ((2 * B, 2 * B + 7), ((2 * B, 2 * B + 10),))]
    tasks = _tasks(exp, todo, datasets, 1, "h")
    assert all(t.one_per_call and len(t.runs) == 1 and not t.blocks for t in tasks)


def _proc_children(pid):
    """Pids whose parent is ``pid`` (Linux /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


def _proc_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_workers_exit_when_a_bench_is_killed(proben1_root, tmp_path):
    """SIGKILL of `fastnet bench -j 2` alone: its loky workers used to wait out loky's
    300 s idle timeout (and leave /dev/shm/joblib_* folders); now they go at once."""
    out = tmp_path / "k.jsonl"
    cmd = [sys.executable, "-m", "fastnet", "bench", "-p", "cancer1", "glass1", "-n", "pivot",
           "-r", "40", "--batch-size", "4", "-q", "-j", "2", "--data", str(proben1_root),
           "-o", str(out)]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    kids = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            kids = _proc_children(proc.pid)
            if len(kids) >= 2 and out.exists() and out.read_bytes().count(b"\n") >= 2:
                break       # the workers run and have written a record
            time.sleep(0.02)
        kids = set(kids) | {k for kid in kids for k in _proc_children(kid)}
        assert len(kids) >= 2, "the workers did not start"
    finally:
        proc.kill()     # the command alone, not its process group
        proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while any(map(_proc_alive, kids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [k for k in kids if _proc_alive(k)]
    for k in left:      # do not leave them behind when the test fails
        os.kill(k, signal.SIGKILL)
    assert not left, f"{len(left)} worker processes outlived the killed bench by 5 s"
    if Path("/dev/shm").is_dir():
        assert not [f for f in os.listdir("/dev/shm") if f"_{proc.pid}_" in f]


def test_run_counts_and_jobs_are_bounded(proben1_root, tmp_path):
    from fastnet.experiment import MAX_GRID_RUNS, MAX_JOBS, MAX_RUNS

    assert (MAX_RUNS, MAX_GRID_RUNS, MAX_JOBS) == (10_000, 100_000, 256)
    # -r 10**23 used to hang, -r 10**9 to take 3.7 GB before a MemoryError
    for runs in (10**23, 10**9, MAX_RUNS + 1, 0):
        with pytest.raises(ValueError, match=rf"`runs` must be from 1 to {MAX_RUNS}, got "
                                             rf"{runs}\."):
            Experiment(problems="cancer1", runs=runs)
    with pytest.raises(ValueError, match=r"`runs` must be from 1 to 10000, got an integer of "
                                         r"about 400 digits\."):
        Experiment(problems="cancer1", runs=10**400)
    with pytest.raises(ValueError, match=r"`runs` must keep the grid within 100000 runs "
                                         r"\(MAX_GRID_RUNS\), got 45 problems x 3 networks x "
                                         r"1 algorithms \(grid cells, counted before any is "
                                         r"made\) x 1000 runs = 135000\."):
        Experiment(problems="all", networks=("linear", "pivot", "noshortcut"), runs=1000)
    assert Experiment(problems="cancer1", runs=MAX_RUNS).runs == MAX_RUNS
    exp = _experiment(proben1_root, problems=("cancer1",), networks=("linear",), runs=2)
    for jobs in (MAX_JOBS + 1, 1000, 0, -2):
        with pytest.raises(ValueError, match=rf"`jobs` must be from 1 to {MAX_JOBS}, got "
                                             rf"{jobs} \(or -1: every core\)\."):
            run_experiment(exp, tmp_path / "j.jsonl", jobs=jobs)
    # -j 12 for one batch of runs used to start 12 workers: now none (this process)
    res = run_experiment(exp, tmp_path / "one.jsonl", jobs=12)
    assert (res.backend, res.workers, res.n_new) == ("sequential", 1, 2)
    res = run_experiment(exp, tmp_path / "two.jsonl", jobs=MAX_JOBS, batch_size=1)
    assert (res.backend, res.workers, res.n_new) == ("loky", 2, 2)
    assert _records(tmp_path / "one.jsonl")[0]["test"] == pytest.approx(
        _records(tmp_path / "two.jsonl")[0]["test"], rel=1e-9)
