"""A training run through the command line: one run of a folder at a time (a lock naming
its holder), signals that save a checkpoint and print the command that resumes it bit for
bit, SIGTERM answered within a second in every phase, a damaged checkpoint named, a
diverging run said. Real entry point, tiny runs."""

import functools
import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from small_models import cli, refused, sha256, start_pretrain

from minibert.io.fileio import LOCK_NAME

# A tiny run: about a second of preparation, a few hundredths of a second per step.
TINY = ["--batch-size", "8", "--max-seq-length", "32", "--vocab-size", "400",
        "--num-documents", "60", "--workers", "1"]


LONG = ["--steps", "60", "--eval-every", "60", *TINY]  # long enough to be interrupted


# pretrain prints progress lines before its error: the error is stderr's last line.
refused_pretrain = functools.partial(refused, command="pretrain")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "run"
    result = cli("pretrain", "--out", str(out), *LONG)
    assert result.returncode == 0, result.stderr
    return sha256(out)


def test_the_resume_command_is_the_invocation_with_resume(tmp_path):
    import argparse

    from minibert.cli.train import _resume_command

    args = argparse.Namespace(program=["minibert"], resume=False,
                              argv=["pretrain", "--out", "runs/my run", "--overwrite",
                                    "--steps", "40"])
    assert _resume_command(args) == "minibert pretrain --out 'runs/my run' --steps 40 --resume"
    args.resume, args.argv = True, ["pretrain", "--out", "r", "--resume"]
    assert _resume_command(args) == "minibert pretrain --out r --resume"


@pytest.mark.parametrize("phase, after, documents", [
    ("corpus", "checkpoints:", 100_000),  # the most --num-documents allows
    pytest.param("vocabulary", "corpus:", 20_000, marks=pytest.mark.slow),
    pytest.param("instances", "vocabulary:", 20_000, marks=pytest.mark.slow),
])
def test_sigterm_is_answered_within_a_second_in_every_phase(phase, after, documents,
                                                            tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "minibert", "pretrain", "-o",
                                str(tmp_path / "run"), "--num-documents", str(documents),
                                "--workers", "1"], stderr=subprocess.PIPE, text=True)
    for line in process.stderr:  # the phase starts right after this line
        if line.startswith(after):
            break
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    sent = time.perf_counter()
    process.wait(timeout=30)
    assert time.perf_counter() - sent < 1.0
    assert process.returncode == 128 + signal.SIGTERM
    rest = process.stderr.read()
    assert "stopped by SIGTERM" in rest
    assert f"{phase}:" not in rest  # stopped in the phase, before its closing line


def test_a_diverging_run_with_workers_says_it_diverged_not_labels(tmp_path):
    """A worker's NaN loss was reported as "worker 0 ValueError: ... every shard needs
    labels", with a --resume command that diverges again; now it is the run's divergence,
    named as the single process names it, with no resume advice."""
    result = cli("pretrain", "-o", tmp_path / "run", "--workers", "2", "--lr", "1e4",
                 "--steps", "40", "--num-documents", "100", "--save-every", "5", timeout=300)
    refused(result, "the loss became nan at step", "the run diverged; try a smaller "
            "learning rate (resuming with the same settings diverges again)",
            command="pretrain")
    assert "labels" not in result.stderr and "resume with:" not in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_saves_the_step_and_the_printed_command_resumes_it(tmp_path, name,
                                                                   uninterrupted):
    out = tmp_path / "run"
    # The periodic checkpoint is written after step 1 (then every 60 s): one of step 10 or
    # later can only come from the signal.
    process, _ = start_pretrain(out, *LONG, step=10)
    process.send_signal(getattr(signal, name))
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + getattr(signal, name), stderr
    last = stderr.strip().splitlines()[-1]
    assert f"minibert pretrain: stopped by {name}; the checkpoint holds step" in last, stderr
    state = json.loads((out / "checkpoint" / "trainer_state.json").read_text())
    assert f"holds step {state['step']};" in last and 10 <= state["step"] < 60
    assert not (out / "model.safetensors").exists() and not (out / LOCK_NAME).exists()
    command = shlex.split(last.split("resume with: ", 1)[1])
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed from {out / 'checkpoint'} at step {state['step']}" in resumed.stderr
    assert sha256(out) == uninterrupted


@pytest.mark.slow
def test_a_second_run_is_refused_while_the_first_lives_and_takes_over_once_it_died(
        tmp_path):
    out = tmp_path / "run"
    first, _ = start_pretrain(out, "--steps", "100000", *TINY)  # killed long before its end
    try:
        second = cli("pretrain", "--out", str(out), *LONG)
        refused_pretrain(second, f"--out {str(out)!r} is in use by a running job (pid {first.pid})")
        second = cli("pretrain", "--out", str(out), *LONG, "--overwrite")
        refused_pretrain(second, f"(pid {first.pid})")
        assert (out / LOCK_NAME).read_text().split()[0] == str(first.pid)
    finally:
        first.kill()  # dies without a word: its lock file stays behind
        first.communicate()
    assert (out / LOCK_NAME).exists()
    third = cli("pretrain", "--out", str(out), *LONG)
    refused_pretrain(third, "holds the checkpoint of an interrupted run; pass --resume")
    assert f"a job (pid {first.pid}) that wrote into" in third.stderr
    fourth = cli("pretrain", "--out", str(out), "--steps", "2", *TINY, "--overwrite")
    assert fourth.returncode == 0, fourth.stderr
    assert not (out / "checkpoint").exists() and not (out / LOCK_NAME).exists()


@pytest.mark.slow
def test_overwrite_removes_only_what_minibert_wrote(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "command.txt").write_text("mine")  # a name minibert uses, in a folder without a model
    assert cli("pretrain", "--out", str(out), "--steps", "2", *TINY).returncode == 0
    assert (out / "command.txt").read_text() == "mine"  # only --overwrite removes anything
    leftovers = ["fill_mask.json", "fill_mask.txt", "attention_head.png",
                 "training_curves.png", "command.txt"]
    for name in leftovers:
        (out / name).write_text("from the previous run")
    (out / "notes.txt").write_text("the lecturer's own notes")
    refused_pretrain(cli("pretrain", "--out", str(out), "--steps", "2", *TINY),
            "already holds a model; pass --overwrite")
    # and a lock file left by a job that died (no process holds it)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True)
    dead = int(finished.stdout)
    (out / LOCK_NAME).write_text(f"{dead} {os.uname().nodename}\n")
    result = cli("pretrain", "--out", str(out), "--steps", "3", *TINY, "--overwrite",
                 "--json")
    assert result.returncode == 0, result.stderr
    assert not any((out / name).exists() for name in leftovers)
    assert f"a job (pid {dead}) that wrote into" in result.stderr
    assert not (out / LOCK_NAME).exists()
    assert (out / "notes.txt").read_text() == "the lecturer's own notes"
    # --json prints exactly metrics.json, full precision
    assert json.loads(result.stdout) == json.loads((out / "metrics.json").read_text())
    assert json.loads(result.stdout)["steps"] == 3


def test_a_refused_run_leaves_no_folder_behind(tmp_path):
    out = tmp_path / "new" / "run"
    result = cli("pretrain", "--out", str(out), "--steps", "2", *TINY[2:],
                 "--batch-size", "4000")
    refused_pretrain(result, "error: --batch-size 4,000 is more than the", "training instances")
    assert list(tmp_path.iterdir()) == []


def interrupt_a_run(out):
    """Start the LONG run into ``out`` and stop it with Ctrl-C: a resumable checkpoint."""
    process, _ = start_pretrain(out, *LONG)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr


def test_a_damaged_trainer_state_is_named(tmp_path):
    out = tmp_path / "run"
    interrupt_a_run(out)
    state_file = out / "checkpoint" / "trainer_state.json"
    state = json.loads(state_file.read_text())
    state["step"] = 999999
    state_file.write_text(json.dumps(state))
    refused_pretrain(cli("pretrain", "--out", str(out), *LONG, "--resume"),
            f"{str(state_file)!r}: step must be a whole number in 1..60 (the run's steps), "
            f"got 999999", "start the run again with --overwrite")
    state_file.write_text('{"step": 3 "training_config": {}}')
    refused_pretrain(cli("pretrain", "--out", str(out), *LONG, "--resume"),
            f"{str(state_file)!r} is not valid JSON (Expecting ',' delimiter")
    assert not (out / LOCK_NAME).exists()


def test_resume_refuses_another_world(tmp_path):
    out = tmp_path / "run"
    interrupt_a_run(out)
    refused_pretrain(cli("pretrain", "--out", str(out), *LONG, "--world", "everyday",
                         "--resume"),
                     "--resume needs the settings of the interrupted run; world: checkpoint "
                     "'themes' vs now 'everyday'")
    assert (out / "checkpoint").is_dir() and not (out / LOCK_NAME).exists()
