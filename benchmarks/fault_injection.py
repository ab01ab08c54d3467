"""Interrupt tiny 2-process pretraining runs at random moments and check what they leave.

    python benchmarks/fault_injection.py --cases 60 --seed 0          # MPICH and workers
    python benchmarks/fault_injection.py --cases 6 --transports workers

Each case starts ``minibert pretrain`` on two processes, either ``mpiexec -n 2`` (MPI ranks)
or ``--workers 2`` (worker processes), and at a random moment (before the first step,
mid-step, at a held-out evaluation, during a checkpoint save, after the last step) does
one thing to it: SIGINT, SIGTERM or SIGHUP to the launcher (mpiexec, or the parent), to
one rank or worker, or to the launcher's process group; kill -9 of one rank or worker; or
(MPI) an exception raised in rank 1. Then it checks:

- every process of the run is gone within 30 s (else: a hang; they are killed);
- no traceback in the output;
- a run the fault stopped printed minibert's own line (counted in the table; MPICH's
  mpiexec kills every rank at once on kill -9 of one and dies of SIGHUP, and the line is
  then the witness's, ``minibert.bridges.mpi.Witness``);
- the checkpoint, if any, is whole (``checkpoint_step`` reads it);
- the run completed from what it left (``--resume``, or a fresh start when no checkpoint
  was written yet) ends with the weights of a run never interrupted, bit for bit.

Prints one row per kind of case and a total; exits 1 if any check failed. Needs Linux's
/proc (to find the ranks and workers), and for MPI the ``mpi`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

RUN = ["--steps", "40", "--eval-every", "20", "--batch-size", "8", "--max-seq-length", "32",
       "--vocab-size", "400", "--num-documents", "60", "--save-every", "5"]
MOMENTS = ("before the first step", "mid-step", "at evaluation", "during a save",
           "after the last step")
# (fault, target): what is done, and to which process
FAULTS = {
    "mpi": [(s, t) for s in ("SIGINT", "SIGTERM", "SIGHUP") for t in ("launcher", "one", "group")]
    + [("SIGKILL", "one"), ("exception", "rank 1")],
    "workers": [(s, t) for s in ("SIGINT", "SIGTERM", "SIGHUP")
                for t in ("launcher", "one", "group")] + [("SIGKILL", "one")],
}
# Rank 1 raises at its 12th step: the code is run with ``python -c`` in place of the module.
RAISE = ("import sys, minibert.bridges.mpi as m\n"
         "step = m.MPIDataParallel.step\n"
         "def failing(self, *a, **k):\n"
         "    if self.world.rank == 1 and self.optimizer.step_count == 11:\n"
         "        raise RuntimeError('injected fault in rank 1')\n"
         "    return step(self, *a, **k)\n"
         "m.MPIDataParallel.step = failing\n"
         "from minibert.cli import main\n"
         "sys.exit(main(sys.argv[1:]))\n")


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            with contextlib.suppress(OSError), \
                    open(f"/proc/{parent}/task/{task}/children") as handle:
                children = [int(child) for child in handle.read().split()]
                found += children
                queue += children
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def sha256(folder: Path) -> str | None:
    path = folder / "model.safetensors"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def command(transport: str, out: Path, mpiexec: str, *extra: str, code: str | None = None):
    program = [sys.executable, "-c", code] if code else [sys.executable, "-m", "minibert"]
    if transport == "mpi":
        return [mpiexec, "-n", "2", *program, "pretrain", "--out", str(out), *RUN, *extra]
    return [*program, "pretrain", "--out", str(out), *RUN, "--workers", "2", *extra]


def complete(transport: str, out: Path, mpiexec: str) -> tuple[str | None, str]:
    """Finish the run from what the interrupted one left: resume, or start again."""
    from minibert.training.pretrain import checkpoint_step

    if (out / "metrics.json").is_file() and checkpoint_step(out) is None:
        return sha256(out), "finished"
    how = "--resume" if checkpoint_step(out) is not None else "--overwrite"
    result = subprocess.run(command(transport, out, mpiexec, how), capture_output=True,
                            text=True, timeout=600)
    if result.returncode != 0:
        return None, f"{how} failed ({result.returncode}): {result.stderr.strip()[-300:]}"
    return sha256(out), how


def target_pids(transport: str, launcher: int, target: str, rng) -> list[int]:
    """The process(es) a fault goes to: one rank (MPI) or one worker, chosen at random
    (waiting up to 20 s for the workers to start)."""
    deadline = time.monotonic() + 20
    while True:
        found = _candidates(transport, launcher)
        if found or time.monotonic() > deadline:
            return [rng.choice(sorted(found))] if found else []
        time.sleep(0.05)


def _candidates(transport: str, launcher: int) -> list[int]:
    below = descendants(launcher)
    if transport == "mpi":
        ranks = []
        for pid in below:
            with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as handle:
                if any(item.startswith((b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK="))
                       for item in handle.read().split(b"\0")):
                    ranks.append(pid)
        candidates = ranks
    else:
        candidates = [pid for pid in below if alive(pid)]
    return candidates


def wait_for(lines: list[str], done: threading.Event, text: str, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not done.is_set():
        if any(text in line for line in lines):
            return True
        time.sleep(0.01)
    return any(text in line for line in lines)


def one_case(transport: str, fault: str, target: str, moment: str, rng, work: Path,
             mpiexec: str, reference: str) -> dict:
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)
    code = RAISE if fault == "exception" else None
    process = subprocess.Popen(command(transport, out, mpiexec, code=code),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    lines: list[str] = []
    done = threading.Event()

    def read():
        for line in process.stderr:
            lines.append(line)
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    record = {"transport": transport, "fault": fault, "target": target, "moment": moment}
    watched: set[int] = set()
    try:
        if fault != "exception":
            if moment == "before the first step":  # while the data is prepared
                wait_for(lines, done, "vocabulary:", 120)
                time.sleep(rng.uniform(0.0, 0.3))
            elif moment == "mid-step":
                wait_for(lines, done, "step 1/", 120)
                time.sleep(rng.uniform(0.0, 0.5))
            elif moment == "at evaluation":
                wait_for(lines, done, "step 20/", 120)
            elif moment == "during a save":
                wait_for(lines, done, "step 10/", 120)
                time.sleep(rng.uniform(0.0, 0.01))
            else:
                wait_for(lines, done, "final evaluation", 120)
            watched = set(descendants(process.pid))
            if target == "launcher":
                pids = [process.pid]
            elif target == "group":
                pids = []
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, getattr(signal, fault))
            else:
                pids = target_pids(transport, process.pid, target, rng)
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, getattr(signal, fault))
        began = time.monotonic()
        while time.monotonic() - began < 30:
            watched |= set(descendants(process.pid)) if process.poll() is None else set()
            if process.poll() is not None and not any(alive(pid) for pid in watched):
                break
            time.sleep(0.05)
        record["seconds"] = time.monotonic() - began
        record["hang"] = process.poll() is None or any(alive(pid) for pid in watched)
    finally:
        if process.poll() is None or any(alive(pid) for pid in watched):
            for pid in [*descendants(process.pid), *watched]:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        reader.join(timeout=10)
    stderr = "".join(lines)
    record["status"] = process.returncode
    record["traceback"] = "Traceback" in stderr
    record["last"] = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    # A run the fault stopped must say why in minibert's own line (for MPICH's kill -9 of a
    # rank and SIGHUP to mpiexec, the witness's: no rank is left to say it).
    record["named"] = any(line.startswith("minibert") for line in stderr.splitlines())
    from minibert.training.pretrain import Trainer, checkpoint_step

    has_folder = Trainer.find_checkpoint(out) is not None
    record["lost"] = has_folder and checkpoint_step(out) is None
    record["step"] = checkpoint_step(out)
    digest, how = complete(transport, out, mpiexec)
    record["resume"] = how
    record["equal"] = digest == reference
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=60, help="interruptions in all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--transports", default="mpi,workers",
                        help="comma-separated: mpi, workers")
    parser.add_argument("--mpiexec", default=shutil.which(
        "mpiexec", path=os.pathsep.join([str(Path(sys.executable).parent),
                                         os.environ.get("PATH", "")])))
    parser.add_argument("--mpi-name", default="MPICH",
                        help="the MPI library, for the table (MPICH, Open MPI)")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--log", help="append each case's record to this file (JSON lines)")
    parser.add_argument("--table", help="print the table of a --log file and exit")
    args = parser.parse_args(argv)
    if args.table:
        with open(args.table, encoding="utf-8") as handle:
            print(table([json.loads(line) for line in handle if line.strip()],
                        args.mpi_name))
        return 0
    transports = [t for t in args.transports.split(",") if t]
    bad = [t for t in transports if t not in FAULTS]
    if bad or not transports:
        parser.error(f"--transports must name mpi and/or workers, got {args.transports!r}")
    if "mpi" in transports and not args.mpiexec:
        parser.error("--transports mpi needs mpiexec (the mpi extra); none found on PATH")
    records = run(args.cases, args.seed, transports, args.mpiexec, args.verbose, args.log)
    print(table(records, args.mpi_name))
    failed = [r for r in records if r["hang"] or r["traceback"] or r["lost"] or not r["equal"]]
    return 1 if failed else 0


def run(cases: int, seed: int, transports: list[str], mpiexec: str | None,
        verbose: bool = False, log: str | None = None) -> list[dict]:
    """``cases`` interruptions spread over the transports, faults and moments."""
    rng = random.Random(seed)
    plan = []
    for transport in transports:
        for fault, target in FAULTS[transport]:
            for moment in MOMENTS:
                plan.append((transport, fault, target, moment))
    rng.shuffle(plan)
    # every fault at least once, then the rest at random
    by_fault = {}
    for item in plan:
        by_fault.setdefault(item[:3], item)
    chosen = list(by_fault.values())[:cases]
    rest = [item for item in plan if item not in chosen]
    chosen += rest[:max(0, cases - len(chosen))]
    records = []
    with tempfile.TemporaryDirectory(prefix="minibert-faults-") as folder:
        work = Path(folder)
        references = {}
        for transport in sorted({item[0] for item in chosen}):
            out = work / f"reference-{transport}"
            result = subprocess.run(command(transport, out, mpiexec), capture_output=True,
                                    text=True, timeout=600)
            if result.returncode != 0:
                raise RuntimeError(f"the uninterrupted {transport} run failed: "
                                   f"{result.stderr.strip()[-500:]}")
            references[transport] = sha256(out)
        for index, (transport, fault, target, moment) in enumerate(chosen):
            fault_target = "rank 1" if fault == "exception" else target
            record = one_case(transport, fault, fault_target, moment, rng, work, mpiexec,
                              references[transport])
            records.append(record)
            if log:
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
            if verbose:
                print(f"{index + 1:3d} {transport:7s} {fault:9s} {fault_target:8s} "
                      f"{moment:22s} exit {record['status']:4} {record['seconds']:5.1f} s "
                      f"step {record['step']} {record['resume']:10s} "
                      f"{'ok' if record['equal'] else 'DIFFERENT'}"
                      f"{' HANG' if record['hang'] else ''}"
                      f"{' TRACEBACK' if record['traceback'] else ''}  | {record['last'][:90]}",
                      flush=True)
    return records


def table(records: list[dict], mpi_name: str = "MPICH") -> str:
    rows = defaultdict(list)
    for record in records:
        target = {"launcher": "mpiexec" if record["transport"] == "mpi" else "parent",
                  "one": "one rank" if record["transport"] == "mpi" else "one worker",
                  "group": "the group"}.get(record["target"], record["target"])
        rows[(record["transport"], record["fault"], target)].append(record)
    lines = ["| transport | fault | to | cases | exit status | slowest exit (s) | hangs | "
             "tracebacks | lost checkpoints | resumes equal | stopped runs with minibert's "
             "line |",
             "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for (transport, fault, target), group in sorted(rows.items()):
        statuses = ", ".join(str(s) for s in sorted({r["status"] for r in group}))
        lines.append(
            f"| {f'{mpi_name}, 2 ranks' if transport == 'mpi' else '--workers 2'} | {fault} | "
            f"{target} | {len(group)} | {statuses} | "
            f"{max(r['seconds'] for r in group):.1f} | {sum(r['hang'] for r in group)} | "
            f"{sum(r['traceback'] for r in group)} | {sum(r['lost'] for r in group)} | "
            f"{sum(r['equal'] for r in group)}/{len(group)} | {named(group)} |")
    total = len(records)
    lines.append(f"| all | | | {total} | | {max(r['seconds'] for r in records):.1f} | "
                 f"{sum(r['hang'] for r in records)} | {sum(r['traceback'] for r in records)} | "
                 f"{sum(r['lost'] for r in records)} | "
                 f"{sum(r['equal'] for r in records)}/{total} | {named(records)} |")
    return "\n".join(lines)


def named(records: list[dict]) -> str:
    """Of the runs the fault stopped (exit status not 0), how many printed minibert's line
    (older logs, without the field, count as ?)."""
    stopped = [r for r in records if r["status"] != 0]
    if any("named" not in r for r in stopped):
        return "?"
    return f"{sum(r['named'] for r in stopped)}/{len(stopped)}"


if __name__ == "__main__":
    sys.exit(main())
