"""The package's shape, checked from its source (ast), so that it cannot drift back.

Issue 33's bars: no class in ``fastnet.training`` over 250 lines; no function in
``src/fastnet`` over 100 lines of code (its docstring not counted: numpydoc
sections are documentation, not logic); no module over 600 lines;
a network's private buffers (``MLP._w``, ``MLP._layers``) are read outside
``network.py`` at most ``MAX_PRIVATE_BUFFER_USES`` times (its internal interface,
``weight_buffer`` and ``kernel_layers``, is the way in); no private attribute
chain (``a.b._c`` read from another object's private state) in ``fastnet.training``.
Issue 47's: every package and top-level module of ``src/fastnet`` stands on a floor
(`FLOORS`), and no import, at a module's top or inside a function, reaches a floor
above its own; :func:`fastnet.train_many` does not stand on the RPROP entries. (The
kernels' function sizes: tests/test_kernel_sizes.py.)

No module or function is over its bar today (the exception lists below are empty);
one listed would have to shrink (and then leave the list), never grow.
"""
import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "fastnet"

MAX_TRAINING_CLASS = 250
MAX_FUNCTION = 100
MAX_MODULE = 600
MAX_PRIVATE_BUFFER_USES = 5
FORBIDDEN_FOR_TRAINING = ("fastnet.algorithms", "fastnet.gradients", "fastnet.experiment",
                          "fastnet.study")

# Exceptions to the bars: (path under src/fastnet, name) -> lines. Empty since issue 33
# split the last ones; a module or function may join only with a reason, and then
# shrink, never grow.
KNOWN_LONG_MODULES = {}
KNOWN_LONG_FUNCTIONS = {}


def _modules():
    """(path relative to src/fastnet, source, tree) of every Python module of the
    package, the kernels' Cython sources aside (they are not Python)."""
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        yield path.relative_to(SRC).as_posix(), text, ast.parse(text)


MODULES = list(_modules())


def _code_lines(node):
    """Lines of a function or class without its docstring."""
    lines = node.end_lineno - node.lineno + 1
    body = node.body
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        lines -= body[0].end_lineno - body[0].lineno + 1
    return lines


def test_no_module_over_the_bar():
    over = {rel: len(text.splitlines()) for rel, text, _ in MODULES
            if len(text.splitlines()) > MAX_MODULE}
    grown = {rel: n for rel, n in over.items() if n > KNOWN_LONG_MODULES.get(rel, MAX_MODULE)}
    assert not grown, f"modules over {MAX_MODULE} lines (or longer than listed): {grown}"
    fixed = sorted(set(KNOWN_LONG_MODULES) - set(over))
    assert not fixed, f"now within {MAX_MODULE} lines: remove from KNOWN_LONG_MODULES: {fixed}"


def test_no_function_over_the_bar():
    over = {}
    for rel, _, tree in MODULES:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(node)
                if n > MAX_FUNCTION:
                    over[(rel, node.name)] = n
    grown = {k: n for k, n in over.items() if n > KNOWN_LONG_FUNCTIONS.get(k, MAX_FUNCTION)}
    assert not grown, f"functions over {MAX_FUNCTION} lines of code (or longer than listed): {grown}"
    fixed = sorted(set(KNOWN_LONG_FUNCTIONS) - set(over))
    assert not fixed, f"now within {MAX_FUNCTION} lines: remove from KNOWN_LONG_FUNCTIONS: {fixed}"


def test_no_training_class_over_the_bar():
    over = {(rel, node.name): node.end_lineno - node.lineno + 1
            for rel, _, tree in MODULES if rel.startswith("training/")
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and node.end_lineno - node.lineno + 1 > MAX_TRAINING_CLASS}
    assert not over, f"classes of fastnet.training over {MAX_TRAINING_CLASS} lines: {over}"


def _unit(module):
    """The floor-plan unit of a module name: ``fastnet.training._rprop`` -> ``training``,
    ``fastnet.measures`` -> ``measures``, ``fastnet`` itself -> ``fastnet``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _module_name(rel):
    parts = rel[:-3].split("/")
    return ".".join(["fastnet", *parts[:-1]] + ([] if parts[-1] == "__init__" else [parts[-1]]))


def _imported(rel, node):
    """The fastnet modules an import statement names, relative ones resolved
    (``from fastnet import x`` names fastnet.x, ``from fastnet.training import _orders``
    fastnet.training._orders)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "fastnet"]
    module = node.module
    if node.level:
        base = _module_name(rel).split(".")
        if not rel.endswith("__init__.py"):
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        module = ".".join(base + ([module] if module else []))
    if module is None or module.split(".")[0] != "fastnet":
        return []
    if (SRC.parent / module.replace(".", "/")).is_dir():     # a package: its modules or names
        return [f"{module}.{a.name}" for a in node.names]
    return [module]


#: The house's floors, lowest first: a module may import (at its top or inside a
#: function) from its own floor and the floors below, never from one above. Units
#: are the packages of src/fastnet and its top-level modules. Derived from the import
#: graph of issue 47; a new package or module joins a floor here (the test says so).
FLOORS = (
    # 0: the ground, which imports nothing of fastnet but itself
    {"exceptions", "_version", "_build_info", "_typing", "_c_names", "_kernels", "_blas",
     "_validation", "_files", "_docstrings", "_in_training", "_provenance", "_distributions",
     "_lazy"},
    # 1: numbers and data: statistics, measures, stopping criteria, datasets
    {"stats", "measures", "stopping", "traversal", "datasets"},
    # 2: the network, its engine and its files
    {"_engine", "_netfile", "_network_init", "_network_io", "_network_layout", "network",
     "export", "_estimator_files"},
    # 3: training, and what trains or differentiates a network
    {"training", "_objective", "gradients", "backprop", "rprop"},
    # 4: algorithms by name, the estimators and plots of training
    {"algorithms", "_grids", "_sklearn_names", "_partial_fit", "sklearn", "_lawrence", "plots",
     "demo"},
    # 5: experiments
    {"experiment"},
    # 6: reports of experiments
    {"report"},
    # 7: what runs experiments and reports in one call
    {"study", "suite", "reproduction"},
    # 8: the command line and the package's face (``import fastnet`` reaches everything)
    {"cli", "__main__", "fastnet"},
)
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


def _imports():
    """(module, line, imported module, inside a function) of every fastnet import."""
    for rel, _, tree in MODULES:
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported(rel, node):
                    yield rel, node.lineno, name, id(node) not in top


def _source_unit(rel):
    return "fastnet" if rel == "__init__.py" else _unit(_module_name(rel))


def test_every_package_and_module_has_a_floor():
    units = {_source_unit(rel) for rel, _, _ in MODULES} | {_unit(name) for _, _, name, _ in _imports()}
    assert not units - set(FLOOR), f"give these a floor in FLOORS: {sorted(units - set(FLOOR))}"
    assert not set(FLOOR) - units, f"no longer in src/fastnet: {sorted(set(FLOOR) - units)}"


def test_no_import_runs_back_up_a_floor():
    # (imports inside functions count: they are the arrows that ran back up)
    found = [f"{rel}:{line} imports {name}{' (in a function)' if inner else ''}"
             for rel, line, name, inner in _imports()
             if FLOOR.get(_unit(name), 0) > FLOOR.get(_source_unit(rel), len(FLOORS))]
    assert not found, f"imports from a floor above: {found}"


def test_training_imports_nothing_from_the_layers_above():
    # (kept from issue 33, by name: the floors above say the same and more)
    found = [f"{rel}:{line} {name}" for rel, line, name, _ in _imports()
             if rel.startswith("training/")
             and any(name == f or name.startswith(f + ".") for f in FORBIDDEN_FOR_TRAINING)]
    assert not found, f"fastnet.training imports from above it: {found}"


def test_private_buffers_stay_in_network():
    uses = [f"{rel}:{node.lineno} .{node.attr}" for rel, _, tree in MODULES
            if rel != "network.py" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in ("_w", "_layers")]
    assert len(uses) <= MAX_PRIVATE_BUFFER_USES, uses


@pytest.mark.parametrize("rel", sorted(rel for rel, _, _ in MODULES if rel.startswith("training/")))
def test_no_private_attribute_chains_in_training(rel):
    # ``self.lanes.lanes.G`` reached through another object's insides; a chain
    # through one's own private attribute (``self._x.y``) is fine.
    tree = next(tree for r, _, tree in MODULES if r == rel)
    chains = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner = node.value
            if isinstance(inner.value, ast.Name) and inner.value.id == "self":
                continue                    # self.x.attr: one step into a part
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                chains.append(f"{rel}:{node.lineno} ...{inner.attr}.{node.attr}")
    assert not chains, chains


def _class_members(rel, name):
    """Public names defined in the body of class ``name`` of module ``rel``."""
    tree = next(tree for r, _, tree in MODULES if r == rel)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)
    names = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def test_the_engine_has_no_method_per_rule():
    # (the rules' kernels are looked up in one table, EPOCH_KERNELS, by rule code)
    per_rule = sorted(n for n in _class_members("_engine.py", "Workspace") if n.endswith("_epochs"))
    assert not per_rule, per_rule


def test_the_algorithm_protocol_stays_small():
    # draws, lanes, objectives; init_state, step, record; the same over many trials,
    # init_state_many and step_many (issue 59 names them); start, epochs, stop_reason,
    # traversals, drive, updates_per_epoch, block_size. Kernel rules add theirs in
    # KernelRule, full-batch rules in FullBatchRule.
    members = _class_members("training/_algorithms.py", "Algorithm")
    assert len(members) <= 15, sorted(members)


def test_train_many_stands_on_no_rprop_entry():
    # The general many-trials entry (and all it imports inside fastnet.training) is
    # not built on the RPROP-specific ones (issue 47): train_rprop_many sits on it.
    graph = {}
    for rel, _line, name, _ in _imports():
        if rel.startswith("training/"):
            graph.setdefault(_module_name(rel), set()).add(name)
    seen, todo = set(), ["fastnet.training._train_many"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    assert "fastnet.training._many_trials" in seen
    assert not seen & {"fastnet.training._many", "fastnet.training._rprop"}, sorted(seen)
