"""Result files for tests of reading, reports and comparisons: one small real file, rewritten."""
import json

from fastnet.experiment import Experiment, run_experiment


def small_result_file(root, path, problems=("cancer1",), runs=4, seed=0):
    """A real result file: linear networks, a few short runs with test predictions."""
    run_experiment(Experiment(problems=problems, networks=("linear",), runs=runs, seed=seed,
                              options={"max_epochs": 30}, keep_predictions=True,
                              root=str(root)), path)
    return path


def rewrite(src, dst, header=None, record=None):
    """Copy a result file, passing its header and every record (dicts) through the given
    functions, which change them in place; return ``dst``."""
    lines = src.read_text().splitlines()
    objs = [json.loads(line) for line in lines]
    if header is not None:
        header(objs[0])
    for obj in objs[1:]:
        if record is not None:
            record(obj)
    dst.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return dst


def rename_problem(src, dst, old, new):
    """The file with problem ``old`` called ``new`` (grid, data, records)."""
    def header(h):
        h["grid"]["problems"] = [new if p == old else p for p in h["grid"]["problems"]]
        h["data"] = {(new if p == old else p): d for p, d in h["data"].items()}

    def record(r):
        if r["problem"] == old:
            r["problem"] = new
    return rewrite(src, dst, header, record)
