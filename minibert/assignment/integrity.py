"""Integrity: a task file that uses minibert's own answer, or gets round the grader.

A flag does not change the score: the report shows it beside the task, the student sees
why, and the lecturer decides. What tampers with the grader itself (its functions changed,
a result line forged) scores 0. Every route to minibert's own answer is treated alike, so
that a student who imports it is not the only one who is caught:

- ``scan_file`` reads the file's source (``ast``): imports of an autodiff library (torch,
  jax, ...), imports or attribute uses of minibert's function for the same task
  (``from minibert.functional import layernorm_backward``, ``F.layernorm_backward``),
  imports of the minibert module that holds the task's answer (``minibert.gradcheck`` in
  the gradient checker's task, ``minibert.flat_layer`` in the encoder block's, ...).
- ``library_flags``: the file holds a copy of minibert's own answer, renamed or not
  (``similarity.library_matches``, normalised tokens).
- ``watch_reference`` wraps minibert's functions while the task is graded and records a
  call made from the student's folder (a ``getattr`` with a built-up name is still a call):
  the task's own pair, minibert's composition of the block (``flat_layer``), and, in a
  backward task, minibert's forwards and finite differences (``numerical_gradient``).
- ``AuditWatch`` (a ``sys.addaudithook`` hook, which code cannot remove) records what the
  student's code does at run time: ``exec``/``compile``/``eval`` of code, reading
  minibert's source files, starting processes and threads, signals, ``ctypes``, looking at
  the grader's frames or objects (``sys._getframe``, ``gc``), profile and trace hooks.
- ``GraderSnapshot`` records the grader's own functions (the checks, numpy, json, os, ...)
  before the file loads and verifies them after loading and after the checks.

Other tasks' functions are allowed: attention may call minibert's ``softmax_backward``, the
encoder block minibert's layer pairs. docs/assignments.md lists what is caught and what is
not.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
import types
from contextlib import contextmanager
from pathlib import Path

from minibert.assignment.tasks import EXTRA_FUNCTIONS, Task

__all__ = ["AUTODIFF_LIBRARIES", "scan_file", "library_flags", "watch_reference",
           "autodiff_loaded", "AuditWatch", "GraderSnapshot", "foreign_library_modules"]

# Libraries that differentiate for the student: using one skips what the task teaches.
AUTODIFF_LIBRARIES = ("torch", "jax", "jaxlib", "tensorflow", "autograd", "mxnet", "paddle",
                      "tinygrad", "micrograd", "chainer", "theano", "mlx")

# minibert modules that hold a task's answer beyond its function of the same name.
_ANSWER_MODULES = {
    "encoder_block": ("minibert.flat_layer",),
    "model_gradcheck": ("minibert.gradcheck",),
    "adamw": ("minibert.training",),
    "masking": ("minibert.data",),
    "nsp": ("minibert.data",),
}
# Every task: the instructor's answers and the grader's checks.
_ALWAYS_FORBIDDEN = ("minibert.assignment.solutions", "minibert.assignment.checks",
                     "minibert.assignment.instructor", "instructor")
# Names that are the task's answer under another name (classes whose backward is it).
_OTHER_NAMES = {
    "encoder_block": ("BertLayer", "PageLayer", "bert_layer_backward"),
    "model_gradcheck": ("check_loss", "check_module", "check_function", "numerical_gradient"),
    "adamw": ("AdamW", "adamw_update", "adamw_reference"),
}


def own_names(task: Task) -> tuple[str, ...]:
    """The names that are ``task``'s answer in minibert."""
    return (task.function, *EXTRA_FUNCTIONS.get(task.name, {}), *_OTHER_NAMES.get(task.name, ()))


def _module_of(node: ast.ImportFrom) -> str:
    return ("." * node.level) + (node.module or "")


def scan_file(path: Path, task: Task) -> list[str]:
    """Flags for the source of ``path`` (a student's file of ``task``); [] when clean or
    when the file does not parse (its syntax error is reported by the grader)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return []
    names = set(own_names(task))
    answer_modules = _ANSWER_MODULES.get(task.name, ()) + _ALWAYS_FORBIDDEN
    flags: list[str] = []
    imports_minibert = False

    def flag(line: int, text: str) -> None:
        entry = f"{path.name} line {line} {text}"
        if entry not in flags:
            flags.append(entry)

    def check_module(line: int, module: str) -> None:
        nonlocal imports_minibert
        root = module.split(".")[0]
        if root in AUTODIFF_LIBRARIES:
            flag(line, f"imports {module} (automatic differentiation; the task asks for the "
                       f"gradient by hand)")
        if root == "minibert":
            imports_minibert = True
        for answer in answer_modules:
            if module == answer or module.startswith(answer + "."):
                flag(line, f"imports {module}, which holds minibert's answer to this task")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check_module(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = _module_of(node)
            check_module(node.lineno, module)
            for alias in node.names:
                if module.startswith("minibert") and alias.name in names:
                    flag(node.lineno, f"imports minibert's own {alias.name} from {module} "
                                      f"(this task's answer)")
                if module == "minibert" and alias.name in ("functional", "gradcheck"):
                    imports_minibert = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "__import__" and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            check_module(node.lineno, node.args[0].value)
    if imports_minibert:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in names:
                flag(node.lineno, f"uses minibert's own {node.attr} (…{node.attr}, this "
                                  f"task's answer)")
            elif isinstance(node, ast.Constant) and node.value in names:
                flag(node.lineno, f"names minibert's own {node.value} in a string (a "
                                  f"getattr of this task's answer?)")
    return flags


def library_flags(path: Path, task: Task) -> list[str]:
    """A flag for each of minibert's answers to ``task`` that the file holds a copy of."""
    from minibert.assignment.similarity import library_matches

    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [f"{Path(path).name}: {share:.0%} of minibert's {name.split(':')[1]} "
            f"({name.split(':')[0]}) is in this file, token for token (a copy with renamed "
            f"variables?)" for name, share in library_matches(text, task.name)]


def _is_student(filename: str, folder: str) -> bool:
    return os.path.dirname(filename) == folder


def _watched_targets(task: Task) -> list[tuple[object, str, str]]:
    """(owner, attribute, why) of each library function a call of which is flagged."""
    from minibert import flat_layer
    from minibert import functional as F
    from minibert.assignment import blocks

    own = "this task's answer"
    targets = [(F, name, own) for name in (task.function, *EXTRA_FUNCTIONS.get(task.name, {}))
               if callable(getattr(F, name, None))]
    if task.name == "model_gradcheck":
        import minibert.gradcheck as gradcheck
        targets += [(gradcheck, n, own) for n in _OTHER_NAMES["model_gradcheck"]
                    if callable(getattr(gradcheck, n, None))]
    if task.function.endswith("_backward"):  # not the gradient checker: it must difference
        import minibert.gradcheck as gradcheck
        finite = "a forward pass inside a backward: finite differences through the library?"
        targets += [(F, name, finite) for name in dir(F)
                    if name.endswith("_forward") and callable(getattr(F, name))]
        targets += [(blocks, name, finite) for name in ("encoder_block_forward",
                                                        "tied_mlm_forward")
                    if callable(getattr(blocks, name, None))]
        targets += [(gradcheck, name, "finite differences by the library")
                    for name in ("numerical_gradient", "check_function", "check_loss",
                                 "check_module") if callable(getattr(gradcheck, name, None))]
    if task.part == "composition":
        from minibert import model
        from minibert.model import PageLayer
        targets += [(owner, name, "minibert's own composition of the block")
                    for owner in (flat_layer, model)
                    for name in ("bert_layer_backward", "bert_layer_forward")
                    if callable(getattr(owner, name, None))]
        # BertLayer's, ALBERT's and DistilBERT's blocks all run the page through this one
        targets.append((PageLayer, "backward", "minibert's own composition of the block"))
    return targets


def _caller():
    """The frame that called the caller of this function, without sys._getframe (whose
    audit event would cost every watched call a trip through the audit hook)."""
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as error:
        return error.__traceback__.tb_frame.f_back.f_back


@contextmanager
def watch_reference(task: Task, folder: Path, calls: list[str]):
    """While in the block, a call of one of minibert's functions watched for ``task``
    (its own answer, minibert's composition of a block, a forward or a finite difference
    inside a backward) from a file in ``folder`` appends one flag to ``calls``. The
    functions behave as before."""
    folder_name = str(Path(folder).resolve())
    targets = []
    for owner, name, why in _watched_targets(task):
        original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name)
        if original is not None and (owner, name) not in [(o, n) for o, n, _, _ in targets]:
            targets.append((owner, name, why, original))

    def wrap(name, why, original):
        def watched(*args, **kwargs):
            frame = _caller()
            caller = frame.f_code.co_filename
            if _is_student(caller, folder_name) or (
                    caller.startswith("<") and frame.f_back is not None
                    and _is_student(frame.f_back.f_code.co_filename, folder_name)):
                entry = (f"{Path(caller).name} line {frame.f_lineno} calls minibert's own "
                         f"{name} ({why})")
                if entry not in calls:
                    calls.append(entry)
            return original(*args, **kwargs)
        watched.__name__ = getattr(original, "__name__", name)
        watched.__qualname__ = getattr(original, "__qualname__", name)
        watched.__doc__ = getattr(original, "__doc__", None)
        watched.__module__ = getattr(original, "__module__", None)
        return watched

    try:
        for owner, name, why, original in targets:
            setattr(owner, name, wrap(name, why, original))
        yield calls
    finally:
        for owner, name, _, original in targets:
            setattr(owner, name, original)


# ----------------------------------------------------------------------------------------
# What the student's code does at run time: an audit hook, the grader's own functions
# ----------------------------------------------------------------------------------------

_PROCESS_EVENTS = {"subprocess.Popen": "starts a process (subprocess)", "os.system":
                   "starts a process (os.system)", "os.fork": "starts a process (os.fork)",
                   "os.forkpty": "starts a process (os.forkpty)", "os.posix_spawn":
                   "starts a process (os.posix_spawn)", "os.exec": "replaces its process "
                   "(os.exec*)", "os.spawn": "starts a process (os.spawn*)", "os.kill":
                   "sends a signal (os.kill)", "os.killpg": "sends a signal (os.killpg)",
                   "signal.pthread_kill": "sends a signal (signal.pthread_kill)"}
_LOOK_EVENTS = {"sys._getframe": "looks at the grader's frames (sys._getframe)",
                "sys._current_frames": "looks at the grader's frames (sys._current_frames)",
                "gc.get_objects": "looks at the grader's objects (gc.get_objects)",
                "gc.get_referrers": "looks at the grader's objects (gc.get_referrers)",
                "gc.get_referents": "looks at the grader's objects (gc.get_referents)",
                "sys.setprofile": "sets a profile hook (sys.setprofile)",
                "sys.settrace": "sets a trace hook (sys.settrace)",
                "ctypes.dlopen": "uses ctypes (memory outside Python)",
                "ctypes.dlsym": "uses ctypes (memory outside Python)",
                "marshal.loads": "loads compiled code (marshal)"}
_CODE_EVENTS = ("exec", "compile")
_PACKAGE_FOLDER = str(Path(__file__).resolve().parents[1])


class AuditWatch:
    """An audit hook for one job's process: what the student's code does, one flag each.

    ``start(folder, file)`` begins watching for code of ``folder``; ``flags`` lists what
    was seen. A hook cannot be removed once added, so a task cannot turn it off.
    """

    _installed: AuditWatch | None = None

    def __init__(self) -> None:
        self.folder: str | None = None
        self.file = ""
        self.flags: list[str] = []
        self._tampered: list[str] = []
        self._busy = threading.local()

    @classmethod
    def install(cls) -> AuditWatch:
        if cls._installed is None:
            cls._installed = cls()
            sys.addaudithook(cls._installed._hook)
        return cls._installed

    def start(self, folder: Path, file: str) -> None:
        self.folder, self.file, self.flags = str(Path(folder).resolve()), file, []
        self._tampered = []

    def tampered(self) -> list[str]:
        """What the student's code changed of minibert's or numpy's functions and classes
        (``__code__``, ``__defaults__``, a class's methods): the task scores 0."""
        return list(self._tampered)

    def stop(self) -> list[str]:
        self.folder = None
        return list(self.flags)

    def _add(self, text: str) -> None:
        entry = f"{self.file}: {text}"
        if entry not in self.flags:
            self.flags.append(entry)

    def _student(self, name: str) -> bool:
        """A frame of the student's folder, or of code it built at run time."""
        return _is_student(name, self.folder) or (name.startswith("<")
                                                  and not name.startswith("<frozen"))

    def _origin(self, depth: int) -> tuple[bool, bool]:
        """(the student's code started it, an import did) for the frames above the hook:
        the first frame of the student's folder counts, unless minibert's own code (the
        grader, the library) is in between."""
        frame = sys._getframe(depth)
        importing = False
        for _ in range(12):
            if frame is None:
                break
            name = frame.f_code.co_filename
            if name.startswith("<frozen importlib"):
                importing = True
            elif self._student(name):
                return True, importing
            elif name.startswith(_PACKAGE_FOLDER):
                return False, importing
            frame = frame.f_back
        return False, importing

    def _hook(self, event: str, args: tuple) -> None:
        if self.folder is None or getattr(self._busy, "on", False):
            return
        if event not in _PROCESS_EVENTS and event not in _LOOK_EVENTS and \
                event not in _CODE_EVENTS and event not in ("open", "object.__setattr__"):
            return
        self._busy.on = True
        try:
            self._event(event, args)
        except Exception:  # never let the watch break the student's code or the grader
            pass
        finally:
            self._busy.on = False

    def _event(self, event: str, args: tuple) -> None:
        if event in _CODE_EVENTS:
            frame = sys._getframe(2)  # the code that called exec/compile/eval itself
            code = args[0] if args else None
            library_file = getattr(code, "co_filename", "")
            if event == "exec" and str(library_file).startswith(_PACKAGE_FOLDER) and \
                    frame.f_code.co_filename.startswith("<frozen importlib"):
                # an import of minibert's file: under its own name, or the student's?
                namespace = (frame.f_locals.get("args") or ((), {}))[-1]
                name = namespace.get("__name__", "") if isinstance(namespace, dict) else ""
                if not str(name).startswith("minibert") and self._origin(3)[0]:
                    relative = os.path.relpath(library_file, _PACKAGE_FOLDER)
                    self._add(f"loads minibert's {relative} as module {name!r}")
                return
            if self._student(frame.f_code.co_filename):
                source = args[0]
                what = "exec/compile/eval of code built at run time"
                if isinstance(source, (str, bytes)) and "def " in str(source)[:100000]:
                    what = "exec/compile of function source (minibert's, copied at run time?)"
                self._add(f"line {frame.f_lineno} runs {what}")
            return
        student, importing = self._origin(3)
        if not student or (importing and event != "open"):
            return
        if event == "open":
            path = str(args[0]) if args and isinstance(args[0], (str, bytes, os.PathLike)) \
                else ""
            path = os.fsdecode(path) if path else ""
            real = os.path.realpath(path) if path else ""
            if real.startswith(_PACKAGE_FOLDER) and real.endswith(".py") and not importing:
                self._add(f"reads minibert's source file {os.path.relpath(real, _PACKAGE_FOLDER)}")
            elif real.startswith("/proc/") and not importing:
                self._add(f"reads {path} (the processes' memory or descriptors)")
            return
        if event == "object.__setattr__":
            target = args[0] if args else None
            module = getattr(target, "__module__", "") or ""
            if isinstance(target, (types.FunctionType, type)) and \
                    str(module).startswith(("minibert", "numpy")):
                what = f"{getattr(target, '__qualname__', target)}.{args[1]}"
                self._add(f"changes {what}")
                if what not in self._tampered:
                    self._tampered.append(what)
            return
        text = _PROCESS_EVENTS.get(event) or _LOOK_EVENTS.get(event)
        if text:
            self._add(text)


@contextmanager
def watch_threads(file: str, flags: list[str]):
    """Flag a thread the student's code starts while in the block."""
    before = {thread.ident for thread in threading.enumerate()}
    original = threading.Thread.start

    def start(thread, *args, **kwargs):
        entry = f"{file}: starts a thread ({getattr(thread, 'name', 'thread')})"
        if entry not in flags:
            flags.append(entry)
        return original(thread, *args, **kwargs)

    threading.Thread.start = start
    try:
        yield flags
    finally:
        threading.Thread.start = original
        if any(thread.ident not in before for thread in threading.enumerate()):
            entry = f"{file}: a thread it started is still running"
            if entry not in flags:
                flags.append(entry)


_SNAPSHOT_MODULES = ("minibert.assignment.checks", "minibert.assignment.task_check",
                     "minibert.assignment.integrity", "minibert.assignment.workspace",
                     "minibert.assignment.blocks", "minibert.assignment.runner",
                     "minibert.assignment.similarity", "minibert.functional",
                     "minibert.gradcheck", "minibert.gradcheck.check", "minibert.flat_layer",
                     "numpy", "numpy.random", "numpy.linalg", "json", "os", "builtins", "math")


class GraderSnapshot:
    """The grader's own functions (and numpy's, os's, json's ...) as they are now;
    ``changed()`` names those a task file replaced or rewrote since, ``restore()`` puts
    them back (the grader may run on in this process)."""

    def __init__(self) -> None:
        self.modules = [sys.modules[name] for name in _SNAPSHOT_MODULES if name in sys.modules]
        self.state = self._take()

    def _take(self) -> dict:
        state = {}
        for module in self.modules:
            for name, value in list(vars(module).items()):
                if isinstance(value, types.FunctionType):
                    state[(module, name)] = (value, value.__code__, value.__defaults__)
                elif callable(value) or isinstance(value, types.ModuleType):
                    state[(module, name)] = (value, None, None)
                    if isinstance(value, type) and module.__name__.startswith("minibert"):
                        for attr, member in list(vars(value).items()):
                            if isinstance(member, types.FunctionType):
                                state[(value, attr)] = (member, member.__code__,
                                                        member.__defaults__)
        return state

    def _differs(self, now: dict) -> list[tuple]:
        return [key for key, (value, code, defaults) in self.state.items()
                if key not in now or now[key][0] is not value or now[key][1] is not code
                or now[key][2] is not defaults]

    def changed(self) -> list[str]:
        return sorted(f"{getattr(owner, '__name__', owner)}.{name}"
                      for owner, name in self._differs(self._take()))

    def restore(self) -> None:
        for owner, name in self._differs(self._take()):
            value, code, defaults = self.state[(owner, name)]
            try:
                if code is not None and getattr(value, "__code__", None) is not code:
                    value.__code__ = code
                if isinstance(value, types.FunctionType):
                    value.__defaults__ = defaults
                setattr(owner, name, value)
            except (AttributeError, TypeError, ValueError):
                pass


def foreign_library_modules() -> list[str]:
    """Modules loaded from minibert's source files under another name (an exec of the
    library's source under the student's file name)."""
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or name.startswith("minibert") or \
                not os.path.abspath(file).startswith(_PACKAGE_FOLDER):
            continue
        real = os.path.realpath(file)
        if real.startswith(_PACKAGE_FOLDER + os.sep) and "assignment" not in real and \
                not name.startswith(("_minibert_instructor_", "__main__")):
            found.append(f"loads minibert's {os.path.relpath(real, _PACKAGE_FOLDER)} as "
                         f"module {name!r}")
    return found


def autodiff_loaded(before: set[str]) -> list[str]:
    """The autodiff libraries in ``sys.modules`` now that were not in ``before``."""
    return [name for name in AUTODIFF_LIBRARIES if name in sys.modules and name not in before]
