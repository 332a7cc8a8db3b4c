"""The package's shape: what imports what."""
import ast
import os
import subprocess
import sys

import pytest

import fastnet

SRC = os.path.dirname(os.path.abspath(fastnet.__file__))


def _submodule_names():
    names = set()
    for entry in os.listdir(SRC):
        path = os.path.join(SRC, entry)
        if entry.endswith(".py") and entry != "__init__.py":
            names.add(entry[:-3])
        elif os.path.isfile(os.path.join(path, "__init__.py")):
            names.add(entry)
    return names


def test_no_submodule_imports_names_from_the_package_root():
    # The root re-exports; submodules import from the module that defines a name,
    # so the root can load lazily and no import cycle runs through it.
    submodules = _submodule_names()
    offenders = []
    for folder, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".py") or (folder == SRC and f == "__init__.py"):
                continue
            path = os.path.join(folder, f)
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "fastnet" and node.level == 0:
                    offenders += [f"{os.path.relpath(path, SRC)}:{node.lineno} {a.name}"
                                  for a in node.names if a.name not in submodules]
    assert offenders == []


def _loaded_after(statement):
    code = (f"import sys; {statement}; "
            "print(sorted(m for m in sys.modules if m.startswith('fastnet._kernels.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_datasets_and_statistics_need_no_compiled_code():
    assert _loaded_after("import fastnet.datasets, fastnet.stats") == "[]"
    assert _loaded_after("import fastnet") == "[]"
    # ...and the kernels do load when a network is used.
    assert "fastnet._kernels._forward" in _loaded_after("from fastnet import MLP; MLP(2, (2,), 1)")


def test_root_lists_and_resolves_its_public_names():
    for name in fastnet.__all__:
        assert getattr(fastnet, name) is not None
        assert name in dir(fastnet)
    from fastnet.network import MLP

    assert fastnet.MLP is MLP


def test_core_public_api_has_type_hints():
    import inspect

    from fastnet import measures, stopping

    functions = [fastnet.MLP.__init__, fastnet.MLP.from_proben1, fastnet.MLP.predict,
                 fastnet.MLP.init_weights, fastnet.MLP.save, fastnet.MLP.load,
                 fastnet.train_rprop, fastnet.train_backprop, fastnet.train_rprop_many,
                 fastnet.count_connections, fastnet.count_traversals,
                 fastnet.value_and_grad, fastnet.jacobian,
                 stopping.proben1_multilayer, stopping.GL.__init__]
    functions += [getattr(measures, n) for n in measures.__all__ if n != "cpu_timer"]
    missing = []
    for fn in functions:
        sig = inspect.signature(fn)
        missing += [f"{fn.__qualname__}({p})" for p in sig.parameters.values()
                    if p.name not in ("self", "cls") and p.annotation is p.empty]
        if sig.return_annotation is sig.empty:
            missing.append(f"{fn.__qualname__} -> ?")
    assert missing == []


PUBLIC_MODULES = ["backprop", "datasets", "demo", "exceptions", "experiment", "gradients", "measures",
                  "network", "plots", "report", "reproduction", "rprop", "sklearn", "stats",
                  "stopping", "traversal"]


def test_public_modules_show_only_their_api_in_dir():
    import importlib

    from _extras import available

    for name in PUBLIC_MODULES:
        if name == "sklearn" and not available("sklearn"):
            continue                      # (checked wherever scikit-learn is installed)
        module = importlib.import_module(f"fastnet.{name}")
        public = [n for n in dir(module) if not n.startswith("_")]
        assert sorted(public) == sorted(module.__all__), name
        for n in module.__all__:
            getattr(module, n)


def test_shared_docstring_sections_are_filled_in_and_checked():
    import inspect

    import pytest

    from fastnet import plots
    from fastnet._docstrings import fill  # (the docstring helper itself)

    assert "{{" not in plots.ecdf.__doc__ and "ImportError" in plots.ecdf.__doc__

    @fill(part="a : int\n    Explained.")
    def f():
        """Summary.

        Parameters
        ----------
        {{part}}
        """

    # (Python 3.13's compiler strips a docstring's common indentation, earlier ones keep it)
    assert "\na : int\n    Explained.\n" in inspect.cleandoc(f.__doc__) + "\n"
    with pytest.raises(ValueError, match="no {{other}} line"):
        fill(other="x")(f)


def test_no_import_circles_between_modules():
    # Every `import fastnet...` in every module, function-local ones included (which
    # would only hide a circle), forms a graph without cycles; the package's lazy
    # __init__ aside.
    from pathlib import Path

    root = Path(fastnet.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path

    def module_of(name):
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                               for a in node.names)
        graph[name] = {module_of(t) for t in targets if t.startswith("fastnet")} - {name, "fastnet"}

    def cycle_from(start):
        path, seen = [start], set()
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                seen.add(path.pop())
            elif nxt == start:
                return path + [start]
            elif nxt not in seen and nxt not in path:
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
        return None

    for name in sorted(graph):
        assert cycle_from(name) is None, " -> ".join(cycle_from(name))


def test_ci_and_cmake_name_only_test_files_that_exist():
    # The ASan and no-tiles stages list test files by name; a renamed or merged
    # test file must not turn those stages into "file not found" failures.
    import re
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    named = set()
    for config in ("CMakeLists.txt", os.path.join(".ci", "run")):
        path = os.path.join(root, config)
        if not os.path.exists(path):  # an installed copy of the tests has no CI files
            continue
        with open(path, encoding="utf-8") as handle:
            named.update(re.findall(r"tests/(test_\w+\.py)", handle.read()))
    if not os.path.exists(os.path.join(root, "CMakeLists.txt")):
        return
    assert named, "CMakeLists.txt and .ci/run should name the kernel test files"
    missing = sorted(n for n in named if not os.path.exists(os.path.join(root, "tests", n)))
    assert not missing, f"CI names test files that do not exist: {missing}"


def test_the_command_line_loads_no_study_machinery_nor_downloader_to_train():
    # A `fastnet train` process pays for what it uses: building the parser (whose
    # `study` command names its activations) loads neither the study's statistics
    # and writers nor pooch (ssl, ftplib), which only `datasets fetch` needs.
    code = ("import sys; from fastnet.cli import build_parser; build_parser(); "
            "import fastnet.datasets; "
            "print(sorted(m for m in sys.modules if m in ('fastnet.study._run', "
            "'fastnet.study._write', 'pooch', 'ftplib')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    from fastnet.study import Study, run_study       # (the names resolve when used)
    assert Study.__module__ == "fastnet.study._setup" and callable(run_study)


def test_kernel_list_names_every_kernel_source():
    # setup.py and CMakeLists.txt build the kernels from this one list: a module or
    # header missing from it would not be built, or not rebuilt when it changes.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kernels = os.path.join(root, "src", "fastnet", "_kernels")
    if not os.path.exists(os.path.join(kernels, "kernels.txt")):
        pytest.skip("not a source tree")
    lists = {}
    with open(os.path.join(kernels, "kernels.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                key, _, names = line.partition(":")
                lists[key.strip()] = names.split()
    files = os.listdir(kernels)
    assert sorted(lists["modules"]) == sorted(f[:-4] for f in files if f.endswith(".pyx"))
    assert sorted(lists["headers"]) == sorted(f for f in files if f.endswith((".h", ".pxd", ".pxi")))
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        assert "kernels.txt" in f.read()


# ---- the distribution's name (issue 46, item 14)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The distribution's name: "fastnet" on the package index is another project.
DISTRIBUTION = "fastnet-mlp"


def _text_files():
    yield os.path.join(ROOT, "README.md")
    yield os.path.join(ROOT, "pyproject.toml")
    for top, suffixes in (("src", (".py", ".pyx", ".pxd", ".h", ".txt")), ("docs", (".md", ".py")),
                          ("benchmarks", (".md", ".py"))):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            yield from (os.path.join(folder, f) for f in files if f.endswith(suffixes))


def test_no_install_hint_names_the_other_projects_distribution():
    # `pip install "fastnet[onnx]"` installs an unrelated project called fastnet from the
    # package index: hints name the packages, or ".[onnx]" from a checkout
    offenders = []
    for path in _text_files():
        with open(path, encoding="utf-8") as f:
            offenders += [f"{os.path.relpath(path, ROOT)}:{i}: {line.strip()}"
                          for i, line in enumerate(f, 1) if "fastnet[" in line]
    assert offenders == []


def test_distribution_has_a_name_of_its_own_and_installs_fastnet():
    tomllib = pytest.importorskip("tomllib")        # (Python 3.11+)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["name"] == DISTRIBUTION
    assert project["scripts"] == {"fastnet": "fastnet.cli:main"}
    assert {"test", "onnx", "plot", "sklearn", "dask"} <= set(project["optional-dependencies"])
    import importlib.metadata

    installed = importlib.metadata.packages_distributions().get("fastnet", [])
    if DISTRIBUTION in installed:                  # (an older install of a checkout says "fastnet")
        assert importlib.metadata.version(DISTRIBUTION) == fastnet.__version__


def test_readme_first_screen_says_what_fastnet_is_for_and_how_to_start():
    # (issue 46, item 16: 444 lines, mostly tables; study, suite and export missing)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    lines = readme.splitlines()
    assert len(lines) <= 130
    first_screen = "\n".join(lines[:40])
    assert "is for **benchmark studies of neural-network training**" in first_screen
    install, test = "pip install . && fastnet demo", 'pip install ".[test]" && python -m pytest'
    assert install in first_screen and test in first_screen
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        assert test in f.read()                           # the test command CI runs
    for guide in ("quickstart", "training", "algorithms", "studies", "suite", "performance", "cli"):
        assert f"(docs/{guide}.md)" in first_screen
    commands = {line.split()[1] for line in lines if line.startswith("fastnet ")}
    assert {"demo", "datasets", "train", "bench", "report", "compare", "study", "suite", "export",
            "reproduce"} <= commands
    # the tables moved to the performance guide, numbers and all
    with open(os.path.join(ROOT, "docs", "performance.md"), encoding="utf-8") as f:
        performance = f.read()
    for row in ("| A cancer1 4+2 sc | 350 | 100 | 0.0112 | 0.0671 | 0.0547 | 0.371 | 4.89× (FANN) |",
                "| G synthetic 64+32 | 3.779 | 7.635 | 5.727 | 1.52× (JAX) |",
                "| S synthetic 4096 × 32-32-4 | proben1 | 0.544 | 1.350 | 0.751 | 4.005 | 1.38× |",
                "| thyroid1 16+8, 60 × 300 | 3.27 s (mixed) |", "| 128-96-48-10 | 174 | 45.0 |"):
        assert row in performance and row not in readme
