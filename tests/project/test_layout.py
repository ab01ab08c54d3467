"""The package's layout as docs/architecture.md draws it, read from the import statements.

Every ``import`` and ``from ... import`` of the package's modules, module-level or inside a
function, is an edge of the import graph. The graph has no cycle; each part of the package
(a top-level file or folder) imports only the parts below it (``LAYERS``), with no
exception, and loads none above it by a name in a string (``importlib``); io/ sits below
the models; no module reaches for another's private
names; only the tools (cli/, demo.py, ``__main__``) import the package face
(``minibert/__init__.py``), which imports none of them; ``import minibert`` loads the
library and nothing optional (checked in a fresh process).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "minibert"
# The model layer and everything above it: what io/ must never import.
ABOVE_IO = ("minibert.config", "minibert.hf_config", "minibert.base", "minibert.model",
            "minibert.heads", "minibert.family", "minibert.layers", "minibert.functional",
            "minibert.numerics", "minibert.attribution", "minibert.training", "minibert.viz",
            "minibert.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(name: str) -> list[tuple[str, list[str]]]:
    """(imported module, the names taken from it) for every import statement of ``name``."""
    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("minibert"):
            names = [alias.name for alias in node.names]
            submodules = [f"{node.module}.{n}" for n in names if f"{node.module}.{n}" in MODULES]
            found += [(module, []) for module in submodules]
            taken = [n for n in names if f"{node.module}.{n}" not in MODULES]
            if taken or not submodules:  # ``from package import submodule`` is no edge to it
                found.append((node.module, taken))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names
                      if alias.name.startswith("minibert")]
    return found


def graph() -> dict[str, set[str]]:
    edges = {}
    for name in MODULES:
        targets = set()
        for module, _ in imports(name):
            while module not in MODULES and "." in module:
                module = module.rsplit(".", 1)[0]
            # A subpackage's __init__ re-exports its children: its edges count (a child that
            # took names from it would close a cycle). The package face has tests of its own.
            if module in MODULES and module != name and module != "minibert":
                targets.add(module)
        edges[name] = targets
    return edges


def test_the_import_graph_has_no_cycle():
    edges, state, cycles = graph(), {}, []

    def visit(node, path):
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, " ; ".join(" -> ".join(cycle) for cycle in cycles)


def test_io_imports_nothing_above_it():
    upward = {(name, target) for name, targets in graph().items()
              if name.startswith("minibert.io") for target in targets
              if target.startswith(ABOVE_IO)}
    assert not upward


def test_no_module_imports_a_private_name_of_another():
    private = [(name, module, taken) for name in MODULES for module, names in imports(name)
               for taken in names if taken.startswith("_") and taken != "__version__"]
    private += [(name, module, "") for name in MODULES for module, _ in imports(name)
                if any(part.startswith("_") for part in module.split(".")[1:])]
    assert not private


# The package's parts, bottom to top (docs/architecture.md). A module may import its own
# part and the parts below it, never one above or beside it: io/ sits below the models,
# tokenization/ below io's callers, family/ below training/, training/ below the tools.
LAYERS = (
    ("checks", "numerics"),
    ("functional", "io"),
    ("tokenization", "hf_config"),
    ("layers", "config", "data"),
    ("base", "attribution"),
    ("model",),
    ("heads", "lora", "flat_layer"),
    ("family", "reference"),
    ("training", "fill_mask"),
    ("bridges", "sentence"),
    ("gradcheck",),
    ("viz", "assignment"),
    ("cli", "demo"),
    ("__main__",),
)
LEVEL = {part: level for level, parts in enumerate(LAYERS) for part in parts}


def part_of(module: str) -> str:
    """``minibert.family.albert`` -> ``family``: the top-level file or folder of a module."""
    return module.split(".")[1]


def test_every_part_of_the_package_has_a_layer():
    parts = {part_of(name) for name in MODULES if name != "minibert"}
    assert parts <= set(LEVEL), f"place these in LAYERS: {sorted(parts - set(LEVEL))}"


def test_no_part_imports_upward_or_sideways():
    wrong = sorted(f"{name} -> {target}" for name, targets in graph().items() if name != "minibert"
                   for target in targets
                   if part_of(target) != part_of(name)
                   and LEVEL[part_of(target)] >= LEVEL[part_of(name)])
    assert not wrong, "; ".join(wrong)


def loaded_by_name(name: str) -> list[str]:
    """The modules ``name`` loads from a string (``importlib.import_module("minibert.x")``,
    ``__import__``), which no import statement shows: the name's written start, up to
    its last dot for an f-string (``minibert.training.`` of ``f"minibert.training.{x}"``)."""
    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and ast.unparse(node.func).endswith(
                ("import_module", "__import__")):
            first = node.args[0]
            if isinstance(first, ast.JoinedStr) and first.values:
                first = first.values[0]
            text = first.value if isinstance(first, ast.Constant) else None
            if isinstance(text, str) and text.startswith("minibert."):
                found.append(text)
    return found


def test_no_part_loads_a_module_above_or_beside_it_by_name():
    wrong = sorted(f"{name} loads {text!r}" for name in MODULES if name != "minibert"
                   for text in loaded_by_name(name) if part_of(text) != part_of(name)
                   and LEVEL.get(part_of(text), len(LAYERS)) >= LEVEL[part_of(name)])
    assert not wrong, "; ".join(wrong)


# The package face (minibert/__init__.py) re-exports the library: it sits above every part
# of it, below the tools that may import it (the command line, the demo, ``python -m``).
FACE_USERS = ("cli", "demo", "__main__")


def face_imports(name: str) -> list[str]:
    """What module ``name`` takes from the package face: ``import minibert`` or
    ``from minibert import X`` with X no submodule (``from minibert import functional`` is
    an import of minibert.functional)."""
    taken = []
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            taken += [alias.name for alias in node.names if alias.name == "minibert"]
        elif isinstance(node, ast.ImportFrom) and node.module == "minibert":
            taken += [alias.name for alias in node.names
                      if f"minibert.{alias.name}" not in MODULES]
    return taken


def test_only_the_tools_import_the_package_face():
    wrong = sorted(f"{name} takes {', '.join(face_imports(name))} from minibert"
                   for name in MODULES if name != "minibert"
                   and part_of(name) not in FACE_USERS and face_imports(name))
    assert not wrong, "; ".join(wrong)


def test_the_package_face_imports_no_tool():
    tools = sorted(target for target in graph()["minibert"] if part_of(target) in FACE_USERS)
    tools += [module for module, _ in imports("minibert")
              if module.startswith(tuple(f"minibert.{tool}" for tool in FACE_USERS))]
    assert not tools, tools


# What ``import minibert`` may load beyond the package itself: numpy, never an optional
# dependency; and of the package, no tool (command line, figures, assignment, bridges,
# gradient-check suite) and of training/ only what the top level exports (optim, schedules).
OPTIONAL = ("matplotlib", "torch", "transformers", "mpi4py", "IPython", "scipy")
NOT_ON_IMPORT = ("minibert.cli", "minibert.viz", "minibert.assignment", "minibert.bridges",
                 "minibert.gradcheck", "minibert.demo", "minibert.lora", "minibert.data",
                 "minibert.training.")
TRAINING_ON_IMPORT = {"minibert.training.optim", "minibert.training.schedules"}


def test_import_minibert_loads_the_library_alone():
    code = "import sys, json, minibert; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    loaded = json.loads(result.stdout)
    optional = [m for m in loaded if m.split(".")[0] in OPTIONAL]
    tools = [m for m in loaded if m.startswith(NOT_ON_IMPORT) and m not in TRAINING_ON_IMPORT]
    assert not optional and not tools, (optional, tools)


def test_lazy_names_of_the_top_level_still_resolve():
    code = ("import sys, minibert; f = minibert.use_implementation; "
            "from minibert import *; print(callable(f), 'minibert.assignment' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.split() == ["True", "True"]


# ---- the test suite: each helper defined once ---------------------------------------------

TESTS = PACKAGE.parent / "tests"
# Where the helpers the test files share live: every folder's tests import small_models,
# get the fixtures of the conftest.py files, and the notebook tests share notebook_runner.
SHARED = ("small_models.py", "conftest.py", "parity/conftest.py", "notebooks/notebook_runner.py")


def top_level_functions(path: Path) -> dict[str, bool]:
    """The names of a test file's top-level functions that are not tests (nor pytest's
    hooks), each mapped to whether it is a pytest fixture."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith(("test_", "pytest_")):
            found[node.name] = any("fixture" in ast.unparse(d) for d in node.decorator_list)
    return found


def repeated_helpers(root: Path) -> list[str]:
    """Helpers (not fixtures) defined in two files anywhere below ``root`` (tests/ and every
    folder in it, parity/ included), and names of the shared modules defined again (as a
    helper or a fixture) elsewhere."""
    functions = {path.relative_to(root).as_posix(): top_level_functions(path)
                 for path in sorted(root.rglob("*.py"))}
    shared = {name for file in SHARED for name in functions.get(file, {})}
    where: dict[str, list[str]] = {}
    for file, names in functions.items():
        for name, fixture in names.items():
            if (not fixture or name in shared) and not (file in SHARED and name in shared
                                                          and fixture):
                where.setdefault(name, []).append(file)
    return sorted(f"{name}: {', '.join(sorted(files))}" for name, files in where.items()
                  if len(files) > 1)


def test_no_helper_is_defined_in_two_test_files():
    repeated = repeated_helpers(TESTS)
    assert not repeated, "define these once, in tests/small_models.py:\n" + "\n".join(repeated)


def test_a_helper_defined_twice_is_caught(tmp_path):
    (tmp_path / "small_models.py").write_text("def cli(*args):\n    pass\n")
    (tmp_path / "test_a.py").write_text("def cli(*args):\n    pass\n\n\n"
                                        "def test_a():\n    pass\n")
    (tmp_path / "test_b.py").write_text("def padded(x):\n    return x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "test_c.py").write_text("def padded(x):\n    return x\n")
    (tmp_path / "test_d.py").write_text("import pytest\n\n\n@pytest.fixture\ndef model():\n"
                                        "    return 1\n")
    (tmp_path / "test_e.py").write_text("import pytest\n\n\n@pytest.fixture\ndef model():\n"
                                        "    return 2\n\n\ndef test_a():\n    pass\n")
    assert repeated_helpers(tmp_path) == [
        "cli: small_models.py, test_a.py", "padded: sub/test_c.py, test_b.py"]


# Folders of tests/ that are not named after a subpackage (tests/README.md says what each holds).
OTHER_TEST_FOLDERS = {"core", "notebooks", "project", "parity"}


def test_the_tests_mirror_the_package():
    """Each subpackage of minibert/ has its test folder, holding at least one test file, and
    every test folder is a subpackage's or one of the few others; no test file sits loose in
    tests/ and no two share a name (pytest imports them by name)."""
    subpackages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    folders = {path.name for path in TESTS.iterdir()
               if path.is_dir() and not path.name.startswith((".", "__"))}
    assert subpackages - folders == set(), "subpackages without a test folder"
    assert folders - subpackages - OTHER_TEST_FOLDERS == set(), "test folders of nothing"
    assert all(any((TESTS / name).glob("test_*.py")) for name in subpackages)
    assert not list(TESTS.glob("test_*.py")), "test files outside a folder"
    names = [path.name for path in TESTS.rglob("test_*.py")]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_the_jobs_of_make_test_fast_exist():
    """Every file and test that conftest.py marks as jobs (left out by make test-fast)
    exists."""
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    sets = {node.targets[0].id: ast.literal_eval(node.value.args[0])  # frozenset({...})
            for node in tree.body if isinstance(node, ast.Assign)
            and getattr(node.targets[0], "id", "") in ("JOB_FILES", "JOB_TESTS")}
    files = sorted(TESTS.rglob("test_*.py"))
    tests = {name for path in files for name in top_level_tests(path)}
    assert sets["JOB_FILES"] <= {path.relative_to(TESTS).as_posix() for path in files}
    assert sets["JOB_TESTS"] <= tests


def top_level_tests(path: Path) -> set[str]:
    return {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}
