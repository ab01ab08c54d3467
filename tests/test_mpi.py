"""MPI ranks through the real entry point: ``mpiexec -n 2 python -m minibert pretrain``.

Two ranks train the shards ``--workers 2`` trains, with the same shares of the loss, and
end with the same weights to float32 rounding (measured: the same bits, for two ranks);
rank 0 alone writes; SIGTERM to mpiexec (which forwards it to every rank) saves the step
and the printed command resumes it bit for bit. Skipped, with one line, without the mpi
extra (mpi4py and an MPI library with its mpiexec).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from small_models import weights

from minibert.bridges import mpi

MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                        os.environ.get("PATH", "")]))
_missing = mpi.mpi_available() or (None if MPIEXEC else "no mpiexec on PATH")
pytestmark = pytest.mark.skipif(_missing is not None, reason=f"MPI: {_missing}")

RUN = ["--steps", "60", "--eval-every", "30", "--batch-size", "8", "--max-seq-length", "32",
       "--vocab-size", "400", "--num-documents", "60"]


def mpiexec(*args, ranks: int = 2):
    return [MPIEXEC, "-n", str(ranks), sys.executable, "-m", "minibert", *args]


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
    process = subprocess.Popen(mpiexec("pretrain", "--out", str(out), *longer),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("step 10/"):
            break
    os.killpg(process.pid, signal.SIGTERM)  # as scancel or timeout stop a job
    _, rest = process.communicate(timeout=120)
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


def test_finetune_under_mpi_is_refused_in_one_line(tmp_path):
    """finetune has no data-parallel path: N ranks would each write the whole job into one
    --out. Each rank refuses at once, naming the ranks and what to do."""
    result = subprocess.run(mpiexec("finetune", "--task", "classify", "--out",
                                    str(tmp_path / "ft")), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert set(result.stderr.strip().splitlines()) == {
        "minibert finetune: error: finetune trains in one process; it was started as one of 2 "
        "MPI ranks: run it without mpiexec or srun (pretrain is the command that trains on "
        "MPI ranks)"}
    assert not (tmp_path / "ft").exists()
