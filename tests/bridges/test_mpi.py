"""MPI ranks through the real entry point: ``mpiexec -n 2 python -m minibert pretrain``.

Two ranks train the shards ``--workers 2`` trains, with the same shares of the loss, and
end with the same weights to float32 rounding (measured: the same bits, for two ranks);
rank 0 alone writes; SIGTERM to mpiexec (which forwards it to every rank) or to one rank
alone saves the step and the printed command resumes it bit for bit; a rank killed or
stopped ends the run within seconds. Skipped, with one line, without the mpi extra (mpi4py
and an MPI library with its mpiexec); where MINIBERT_REQUIRE_MPI=1 (CI), that is a failure.
Every run is ended, with all its processes, in a ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from small_models import weights

from minibert.bridges import mpi

MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                        os.environ.get("PATH", "")]))
_missing = mpi.mpi_available() or (None if MPIEXEC else "no mpiexec on PATH")
if _missing is not None and os.environ.get("MINIBERT_REQUIRE_MPI") == "1":
    raise RuntimeError(f"MINIBERT_REQUIRE_MPI=1 but the MPI tests cannot run: {_missing}")
pytestmark = pytest.mark.skipif(_missing is not None, reason=f"MPI: {_missing}")

RUN = ["--steps", "60", "--eval-every", "30", "--batch-size", "8", "--max-seq-length", "32",
       "--vocab-size", "400", "--num-documents", "60"]


def mpiexec(*args, ranks: int = 2):
    return [MPIEXEC, "-n", str(ranks), sys.executable, "-m", "minibert", *args]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the launcher's proxies and the ranks, which MPICH puts
    in process groups of their own)."""
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        for task in os.listdir(f"/proc/{parent}/task") if os.path.isdir(f"/proc/{parent}") \
                else []:
            with contextlib.suppress(OSError), \
                    open(f"/proc/{parent}/task/{task}/children") as handle:
                children = [int(child) for child in handle.read().split()]
                found += children
                queue += children
    return found


def end(process: subprocess.Popen) -> None:
    """Kill a run started in a session of its own: its group, and every process below it."""
    if process.poll() is None:
        below = descendants(process.pid)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    process.wait(timeout=60)


def _hangup_as_from_a_terminal() -> None:
    """In the child before exec: SIGHUP's default action, as a shell in a terminal gives it.

    A suite started under ``nohup`` (or by a job runner that ignores hangups) would otherwise
    pass its ignored SIGHUP on to mpiexec, which never sets a handler of its own for it."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_ranks(out, *args, step: int = 10):
    """``mpiexec -n 2 ... pretrain`` in a session of its own, once rank 0 printed ``step``."""
    process = subprocess.Popen(mpiexec("pretrain", "--out", str(out), *args),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_hangup_as_from_a_terminal)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith(f"step {step}/"):
            return process, seen
    end(process)
    raise AssertionError("".join(seen))


def rank_pids(process) -> dict[int, int]:
    """rank -> pid of the ranks below mpiexec (read from their environment)."""
    ranks = {}
    for pid in descendants(process.pid):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as handle:
            for item in handle.read().split(b"\0"):
                if item.startswith(b"PMI_RANK="):
                    ranks[int(item.split(b"=")[1])] = pid
    return ranks


def test_two_ranks_train_as_two_workers_and_rank_0_alone_writes(tmp_path):
    ranks = subprocess.run(mpiexec("pretrain", "--out", str(tmp_path / "mpi"), *RUN, "--json"),
                           capture_output=True, text=True, timeout=600)
    assert ranks.returncode == 0, ranks.stderr
    assert "(2 MPI ranks)" in ranks.stderr and "on 2 MPI ranks" in ranks.stderr
    assert ranks.stderr.count("final evaluation") == 1  # rank 1 prints nothing
    assert json.loads(ranks.stdout)["steps"] == 60  # one report, rank 0's
    workers = subprocess.run([sys.executable, "-m", "minibert", "pretrain", "--out",
                              str(tmp_path / "workers"), *RUN, "--workers", "2"],
                             capture_output=True, text=True, timeout=600)
    assert workers.returncode == 0, workers.stderr
    a, b = weights(tmp_path / "mpi"), weights(tmp_path / "workers")
    scale = max(float(np.abs(v).max()) for v in b.values())
    difference = max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in b)
    assert difference <= 1e-5 * scale  # float32 rounding of 60 steps (measured: 0)
    histories = [json.loads((tmp_path / name / "history.json").read_text())
                 for name in ("mpi", "workers")]
    losses = [[r["loss"] for r in h if r["split"] == "train"] for h in histories]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)


def test_workers_must_match_the_ranks(tmp_path):
    result = subprocess.run(mpiexec("pretrain", "--out", str(tmp_path / "x"), *RUN,
                                    "--workers", "3"),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "--workers must be the number of MPI ranks 2" in result.stderr


@pytest.mark.slow
def test_sigterm_to_mpiexec_saves_the_step_and_the_command_resumes_exactly(tmp_path):
    longer = [*RUN[:1], "150", *RUN[2:]]
    reference = subprocess.run(mpiexec("pretrain", "--out", str(tmp_path / "ref"), *longer),
                               capture_output=True, text=True, timeout=600)
    assert reference.returncode == 0, reference.stderr
    out = tmp_path / "run"
    process, seen = start_ranks(out, *longer)
    try:
        os.killpg(process.pid, signal.SIGTERM)  # as scancel or timeout stop a job
        _, rest = process.communicate(timeout=120)
    finally:
        end(process)
    stderr = "".join(seen) + rest
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("minibert pretrain: stopped by SIGTERM; the checkpoint holds step")
    command = shlex.split(last.split("resume with: ", 1)[1])
    assert command[:3] == ["mpiexec", "-n", "2"]
    command[0] = MPIEXEC
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    a, b = weights(out), weights(tmp_path / "ref")
    assert all(np.array_equal(a[k], b[k]) for k in b)


def test_a_rank_that_fails_before_training_stops_them_all(tmp_path):
    """Rank 0 alone checks --out: its refusal must end rank 1 too (not leave it waiting in
    the first all-reduce), with rank 0's one line."""
    out = tmp_path / "taken"
    out.mkdir()
    (out / "model.safetensors").write_bytes(b"")
    result = subprocess.run(mpiexec("pretrain", "--out", str(out), *RUN),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"minibert pretrain: error: --out {str(out)!r} already holds a model; pass "
        f"--overwrite to replace it"]


LIBRARY = """
import sys
from minibert.bridges import mpi
from minibert.training.pretrain import TrainingConfig, pretrain

config = TrainingConfig(steps=4, eval_every=4, batch_size=8, max_seq_length=32,
                        vocab_size=400, num_documents=60, workers=mpi.launched_ranks())
world = mpi.world() if sys.argv[2] == "world" else None
try:
    metrics = pretrain(config, sys.argv[1], progress=lambda message: None, world=world)
except ValueError as error:
    print(f"refused: {error}", flush=True)
else:
    print(f"rank {mpi.launched_rank()}: {metrics.get('steps')} steps", flush=True)
"""


def test_the_library_job_takes_its_world_from_its_caller(tmp_path):
    """From Python, each rank passes its world to ``pretrain`` (training/ never imports the
    bridge); a job that mpiexec started on 2 ranks without it is refused in one line
    naming ``world``, on every rank, before any work."""
    runs = {}
    for given in ("world", "none"):
        out = tmp_path / given
        result = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-c", LIBRARY, str(out),
                                 given], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        runs[given] = sorted(result.stdout.splitlines())
    assert runs["world"] == ["rank 0: 4 steps", "rank 1: None steps"]
    assert (tmp_path / "world" / "model.safetensors").is_file()
    assert runs["none"] == [
        f"refused: world is None, but an MPI launcher started this process as rank {rank} of "
        f"2; run python -m minibert pretrain under the launcher, or pass "
        f"world=minibert.bridges.mpi.world()" for rank in (0, 1)]
    assert not (tmp_path / "none").exists()


FINETUNE = """
import sys
import numpy as np
from minibert.bridges import mpi
from minibert.data import tasks
from minibert.heads import BertForSequenceClassification
from minibert.training.finetune import FinetuneConfig, scratch_tokenizer, train_head
from small_models import small_config

world = mpi.world()
tokenizer = scratch_tokenizer(FinetuneConfig(num_documents=100, vocab_size=200))
task = tasks.make_task("classify", train_size=16, test_size=0, seed=2)
features = tasks.encode(task, task.train, tokenizer, 24)
config = small_config(vocab_size=len(tokenizer), max_position_embeddings=32,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = BertForSequenceClassification(config, seed=4, dtype=np.float64,
                                      id2label=list(task.label_names))
settings = FinetuneConfig(task="classify", train_size=16, epochs=2, batch_size=8,
                          learning_rate=1e-2)
train_head(model, features, settings, lambda m: None, world=world)
if world is None or world.rank == 0:
    np.savez(sys.argv[1], **model.state_dict())
"""


def test_finetune_on_two_ranks_gives_the_weights_of_one_process(tmp_path):
    """The same global batches, each rank a shard: one process's weights, to float64
    rounding (no dropout, so that both draw nothing at random)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2])]))
    one, two = tmp_path / "one.npz", tmp_path / "two.npz"
    result = subprocess.run([sys.executable, "-c", FINETUNE, str(one)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    result = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-c", FINETUNE, str(two)],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    with np.load(one) as a, np.load(two) as b:
        assert sorted(a.files) == sorted(b.files)
        scale = max(float(np.abs(a[k]).max()) for k in a.files)
        assert max(float(np.abs(a[k] - b[k]).max()) for k in a.files) < 1e-10 * scale


def test_finetune_under_mpi_writes_from_rank_0_alone(tmp_path):
    result = subprocess.run(mpiexec("finetune", "--task", "classify", "--out",
                                    str(tmp_path / "ft"), "--train-size", "16",
                                    "--test-size", "8", "--epochs", "1", "--batch-size", "8",
                                    "--json"),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert json.loads(result.stdout)["steps"] == 2  # one report, rank 0's
    assert (tmp_path / "ft" / "model.safetensors").is_file()

@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="finding ranks needs /proc")
def test_sigterm_to_one_rank_alone_stops_every_rank_at_the_same_step(tmp_path):
    """The hang this guards against: rank 1 alone decided to stop and waited at a barrier
    while rank 0 waited in the next step's all-reduce, for ever. The request now rides
    the all-reduce: both stop after the same step, rank 0 saves it, and it resumes."""
    longer = [*RUN[:1], "150", *RUN[2:], "--save-every", "5"]
    reference = subprocess.run(mpiexec("pretrain", "--out", str(tmp_path / "ref"), *longer),
                               capture_output=True, text=True, timeout=600)
    assert reference.returncode == 0, reference.stderr
    out = tmp_path / "run"
    process, seen = start_ranks(out, *longer, step=10)
    try:
        ranks = rank_pids(process)
        assert sorted(ranks) == [0, 1]
        os.kill(ranks[1], signal.SIGTERM)
        _, rest = process.communicate(timeout=30)
    finally:
        end(process)
    stderr = "".join(seen) + rest
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("minibert pretrain: stopped by SIGTERM (received by rank 1); the "
                           "checkpoint holds step "), last
    command = shlex.split(last.split("resume with: ", 1)[1])
    command[0] = MPIEXEC
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    a, b = weights(out), weights(tmp_path / "ref")
    assert all(np.array_equal(a[k], b[k]) for k in b)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="finding ranks needs /proc")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_a_rank_killed_or_stopped_ends_the_run_within_seconds(tmp_path, how):
    """kill -9 of rank 1: the launcher ends the others; SIGSTOP of rank 1 (it stops
    answering): rank 0's watchdog names it and aborts. Either way every process is gone
    within 30 s and the last checkpoint is whole."""
    out = tmp_path / "run"
    process, seen = start_ranks(out, *RUN, "--save-every", "5", step=10)
    try:
        ranks = rank_pids(process)
        below = descendants(process.pid)
        os.kill(ranks[1], getattr(signal, how))
        began = time.monotonic()
        _, rest = process.communicate(timeout=30)
        while any(os.path.exists(f"/proc/{pid}") and running(pid) for pid in below) \
                and time.monotonic() - began < 30:
            time.sleep(0.2)
        assert not [pid for pid in below if running(pid)]
    finally:
        end(process)
    stderr = "".join(seen) + rest
    assert "Traceback" not in stderr
    if how == "SIGSTOP":
        assert process.returncode == mpi.ABORT_STATUS, stderr
        assert "rank 0: rank 1 stopped answering" in stderr, stderr
        assert "was killed" not in stderr  # the watchdog's line is the one line
    else:
        assert process.returncode == signal.SIGKILL, stderr  # mpiexec's: the rank's signal
        # mpiexec kills rank 0 at once; the witness, outside the ranks' groups, says why
        ours = [line for line in stderr.splitlines() if line.startswith("minibert")]
        assert len(ours) == 1, stderr
        # rank 1 alone, or (when the witness woke only after mpiexec had killed rank 0
        # too) both ranks "killed at the same moment", mpiexec's banner naming the first
        assert ours[0].startswith((f"minibert: rank 1 (pid {ranks[1]}) was killed",
                                   f"minibert: rank 0 (pid {ranks[0]}) and rank 1 (pid "
                                   f"{ranks[1]}) were killed")), ours
        assert "; the checkpoint holds step " in ours[0] and "resume with: mpiexec" in ours[0]
    from minibert.training.pretrain import checkpoint_step

    assert checkpoint_step(out) is not None and checkpoint_step(out) % 5 == 0


HANDLERS = """
import ctypes, signal, sys
from minibert.bridges import mpi

for signum in (signal.SIGHUP, signal.SIGTERM):
    signal.signal(signum, lambda *a: None)
world = mpi.world()  # MPI_Init: MPICH's UCX takes SIGHUP for its debug handler


class Action(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


def handler(signum):
    action = Action()
    ctypes.CDLL(None).sigaction(signum, None, ctypes.byref(action))
    return action.handler


print(handler(signal.SIGHUP) == handler(signal.SIGTERM))  # both Python's own
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sigaction's layout: Linux")
def test_the_stop_signals_stay_pythons_after_mpi_init():
    """A SIGHUP to a rank while it prepared its data used to vanish (UCX's handler took it,
    and the run went on to its end); the stop signals are Python's again after world()."""
    result = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-c", HANDLERS],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    # One answer per rank; mpiexec may interleave the two ranks' writes ("TrueTrue\n\n").
    answers = re.findall("True|False", result.stdout)
    assert answers == ["True", "True"], result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="finding ranks needs /proc")
def test_sighup_to_mpiexec_is_named_and_the_checkpoint_resumes_exactly(tmp_path):
    """MPICH's mpiexec does not forward SIGHUP: it dies of it, and its proxy kills every
    rank at once, before any can save or speak. The witness names mpiexec and the signal,
    the checkpoint of the last periodic save is whole, and its command resumes it exactly."""
    longer = [*RUN[:1], "150", *RUN[2:], "--save-every", "5"]
    reference = subprocess.run(mpiexec("pretrain", "--out", str(tmp_path / "ref"), *longer),
                               capture_output=True, text=True, timeout=600)
    assert reference.returncode == 0, reference.stderr
    out = tmp_path / "run"
    process, seen = start_ranks(out, *longer, step=10)
    try:
        below = descendants(process.pid)
        os.kill(process.pid, signal.SIGHUP)
        _, rest = process.communicate(timeout=30)  # ends when the witness has written
        began = time.monotonic()
        while any(running(pid) for pid in below) and time.monotonic() - began < 30:
            time.sleep(0.1)
        assert not [pid for pid in below if running(pid)]
    finally:
        end(process)
    stderr = "".join(seen) + rest
    assert process.returncode == -signal.SIGHUP, stderr  # the shell shows 129
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"minibert: mpiexec (pid {process.pid}) "), last
    assert "SIGHUP" in last and "; the checkpoint holds step " in last, last
    command = shlex.split(last.split("resume with: ", 1)[1])
    command[0] = MPIEXEC
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    a, b = weights(out), weights(tmp_path / "ref")
    assert all(np.array_equal(a[k], b[k]) for k in b)


def test_the_witness_names_the_rank_whose_connection_ended_without_a_word(tmp_path):
    """The witness alone (no MPI): rank 0 says bye, rank 1's connection just ends (as a
    killed process's does): one line names rank 1; a run whose ranks all say bye, or one
    that said quiet, gets no line. It ends by itself either way."""
    import socket

    def witness(script):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(tmp_path / f"w{len(list(tmp_path.iterdir()))}"))
        listener.listen(8)
        process = subprocess.Popen([sys.executable, mpi.Witness.SCRIPT,
                                    str(listener.fileno()), "0"],
                                   pass_fds=[listener.fileno()], stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        try:
            ranks = []
            for rank in range(2):
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                connection.connect(listener.getsockname())
                connection.sendall(f"hello {rank} {1000 + rank}\n".encode())
                ranks.append(connection)
            ranks[0].sendall(b"resume mpiexec -n 2 python -m minibert pretrain --resume\n")
            for rank, word in enumerate(script):
                if word:
                    ranks[rank].sendall(f"{word}\n".encode())
                ranks[rank].close()
            _, stderr = process.communicate(timeout=30)
        finally:
            listener.close()
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 0, stderr
        return stderr

    line = witness(["bye", None])
    assert line == ("minibert: rank 1 (pid 1001) was killed (kill -9, the out-of-memory "
                    "killer, or a crash), and the launcher ended the other ranks; resume "
                    "with: mpiexec -n 2 python -m minibert pretrain --resume\n")
    assert witness(["bye", "bye"]) == ""
    assert witness(["quiet", None]) == ""


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False
