"""The package's layout as docs/architecture.md draws it, read from the import statements.

Every ``import`` and ``from ... import`` of the package's modules, module-level or inside a
function, is an edge of the import graph. The graph has no cycle; io/ sits below the
models; only layers.py chooses a fast twin; no module reaches for another's private names.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "minibert"
# The model layer and everything above it: what io/ must never import.
ABOVE_IO = ("minibert.config", "minibert.hf_config", "minibert.base", "minibert.model",
            "minibert.heads", "minibert.family", "minibert.layers", "minibert.functional",
            "minibert.kernels", "minibert.attribution", "minibert.training", "minibert.viz",
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
            found.append((node.module, [n for n in names if f"{node.module}.{n}" not in MODULES]))
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
            # The package's __init__ re-exports its children; it is no layer of its own.
            if module in MODULES and module != name and module != "minibert" and \
                    not module.startswith(name + "."):
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


SWITCH = {"fast_kernels", "set_fast_kernels", "fast_kernels_enabled", "fast_kernels_for_job",
          "JOB_NOTE"}


def test_only_layers_chooses_a_fast_twin():
    """Outside layers.py (and the gradient-check suite, which checks the twins themselves)
    a module may use the switch, never a twin; the models, heads and family not even that,
    but for the distillation job's ``fast_kernels_for_job`` and its note."""
    for name in MODULES:
        if name in ("minibert.kernels", "minibert.layers", "minibert.gradcheck.suite"):
            continue
        for module, names in imports(name):
            if module != "minibert.kernels":
                continue
            assert names and set(names) <= SWITCH, (name, names or "the whole module")
            if name.startswith(("minibert.model", "minibert.heads", "minibert.family")):
                assert set(names) <= {"fast_kernels_for_job", "JOB_NOTE"}, (name, names)


def test_no_module_imports_a_private_name_of_another():
    private = [(name, module, taken) for name in MODULES for module, names in imports(name)
               for taken in names if taken.startswith("_") and taken != "__version__"]
    private += [(name, module, "") for name in MODULES for module, _ in imports(name)
                if any(part.startswith("_") for part in module.split(".")[1:])]
    assert not private
