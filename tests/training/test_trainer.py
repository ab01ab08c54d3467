"""Pretraining runs: reproducible, resumable bit-identically, loadable, and refusing bad input."""

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from small_models import STARTED, cli, weights

import minibert as mb
from minibert.fill_mask import fill_mask
from minibert.training import pretrain as trainer_module
from minibert.training.pretrain import Trainer, TrainingConfig, TrainingDiverged, pretrain

# Dropout on and a decaying learning rate, so that reproducibility and resume also cover the
# dropout generator's state and the schedule's position.
SMALL = dict(steps=8, batch_size=8, max_seq_length=32, vocab_size=400, num_documents=80,
             num_heldout_documents=12, dupe_factor=2, eval_every=4, eval_batches=2,
             log_every=2, learning_rate=2e-3, dropout=0.1, schedule="linear")


def quiet(_message):
    pass


def pretrain_run(tmp_path, name, **overrides):
    config = TrainingConfig(**{**SMALL, **overrides})
    out = tmp_path / name
    metrics = pretrain(config, out, progress=quiet)
    return out, metrics


def test_run_writes_a_loadable_model_and_metrics(tmp_path):
    out, metrics = pretrain_run(tmp_path, "a")
    for name in ("config.json", "model.safetensors", "vocab.txt", "metrics.json",
                 "history.json"):
        assert (out / name).is_file(), name
    saved = json.loads((out / "metrics.json").read_text())
    for key in ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy",
                "next_sentence_loss", "unigram_baseline_accuracy", "steps", "train_seconds"):
        assert key in saved, key
    assert saved["steps"] == 8 and saved == json.loads(json.dumps(metrics))
    model = mb.BertForPreTraining.from_pretrained(out)
    tokenizer = mb.BertTokenizer(out / "vocab.txt")
    assert model.config.vocab_size == len(tokenizer)
    history = json.loads((out / "history.json").read_text())
    assert [h["step"] for h in history if h["split"] == "heldout"] == [4, 8]
    first = history[0]
    # the first loss is about ln(V) + ln(2): uniform MLM and NSP guesses
    assert abs(first["loss"] - (np.log(len(tokenizer)) + np.log(2))) < 0.5


def test_same_seed_same_weights_and_metrics(tmp_path):
    out_a, metrics_a = pretrain_run(tmp_path, "a")
    out_b, metrics_b = pretrain_run(tmp_path, "b")
    for timing in ("train_seconds", "total_seconds"):
        metrics_a.pop(timing)
        metrics_b.pop(timing)
    assert metrics_a == metrics_b
    a, b = weights(out_a), weights(out_b)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    out_c, _ = pretrain_run(tmp_path, "c", seed=1)
    c = weights(out_c)
    assert not np.array_equal(a["cls.predictions.bias"], c["cls.predictions.bias"])


class Interrupt(Exception):
    pass


def test_resume_is_bit_identical(tmp_path):
    reference, _ = pretrain_run(tmp_path, "reference", save_every=3)
    config = TrainingConfig(**{**SMALL, "save_every": 3})
    out = tmp_path / "interrupted"

    def stop_at_five(step):
        if step == 5:
            raise Interrupt

    with pytest.raises(Interrupt):
        pretrain(config, out, progress=quiet, step_hook=stop_at_five)
    state = json.loads((out / "checkpoint" / "trainer_state.json").read_text())
    assert state["step"] == 3
    pretrain(config, out, resume=True, progress=quiet)
    a, b = weights(reference), weights(out)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    history_a = json.loads((reference / "history.json").read_text())
    history_b = json.loads((out / "history.json").read_text())
    assert [h["loss"] for h in history_a if "loss" in h] == \
        [h["loss"] for h in history_b if "loss" in h]
    # a finished run, resumed or not, leaves no checkpoint behind its model
    for folder in (reference, out):
        assert not [p.name for p in folder.iterdir() if "checkpoint" in p.name]


def test_checkpoints_are_on_by_default(tmp_path):
    """After step 1, then by training time: a default run is resumable without asking."""
    assert TrainingConfig().save_seconds == 60 and TrainingConfig().save_every == 0
    out = tmp_path / "default"
    seen = {}

    def record(step):
        seen[step] = json.loads((out / "checkpoint" / "trainer_state.json").read_text())["step"]

    pretrain(TrainingConfig(**SMALL), out, progress=quiet, step_hook=record)
    assert seen == {step: 1 for step in range(1, 8)} | {8: 8}
    assert not (out / "checkpoint").exists()
    seen.clear()
    pretrain(TrainingConfig(**{**SMALL, "save_every": 3}), out, overwrite=True,
             progress=quiet, step_hook=record)
    assert seen == {1: 1, 2: 1, 3: 3, 4: 3, 5: 3, 6: 6, 7: 6, 8: 8}
    seen.clear()
    off = TrainingConfig(**{**SMALL, "save_seconds": 0})
    pretrain(off, out, overwrite=True, progress=quiet,
             step_hook=lambda step: seen.setdefault(step, (out / "checkpoint").exists()))
    assert not any(seen.values())


def test_slow_checkpoints_are_written_less_often(tmp_path):
    """A checkpoint that takes long to write is spaced out to stay near 1% of the time."""
    config = TrainingConfig(**SMALL)
    trainer = Trainer(config, trainer_module.prepare_data(config, quiet), quiet)
    trainer.step, trainer.train_seconds = 3, 100.0
    assert trainer.checkpoint_due()  # never written yet
    trainer._saved_at, trainer._save_cost = 100.0, 0.03
    trainer.train_seconds = 159.0
    assert not trainer.checkpoint_due()
    trainer.train_seconds = 160.0
    assert trainer.checkpoint_due()
    trainer._save_cost = 5.0  # a large model: 100 x 5 s between checkpoints, not 60 s
    assert not trainer.checkpoint_due()
    trainer.train_seconds = 600.0
    assert trainer.checkpoint_due()


def test_resume_checks_settings_before_preparing_data(tmp_path, monkeypatch):
    out = tmp_path / "run"

    def stop_at_two(step):
        if step == 2:
            raise Interrupt

    with pytest.raises(Interrupt):
        pretrain(TrainingConfig(**SMALL), out, progress=quiet, step_hook=stop_at_two)

    def no_data(*args, **kwargs):
        raise AssertionError("data prepared before the settings were checked")

    monkeypatch.setattr(trainer_module, "prepare_data", no_data)
    with pytest.raises(ValueError, match="learning_rate: checkpoint 0.002 vs now 0.001"):
        pretrain(TrainingConfig(**{**SMALL, "learning_rate": 1e-3}), out, resume=True,
                 progress=quiet)
    with pytest.raises(ValueError, match=r"same --steps as the interrupted run \(8\), got 9"):
        pretrain(TrainingConfig(**{**SMALL, "steps": 9}), out, resume=True, progress=quiet)
    with pytest.raises(FileExistsError, match="checkpoint of an interrupted run; pass --resume"):
        pretrain(TrainingConfig(**SMALL), out, progress=quiet)


def test_resume_of_a_finished_or_missing_run_says_why(tmp_path):
    out, _ = pretrain_run(tmp_path, "done")
    with pytest.raises(FileNotFoundError, match="holds a finished run"):
        pretrain(TrainingConfig(**SMALL), out, resume=True, progress=quiet)
    with pytest.raises(FileNotFoundError, match="does not exist; nothing to resume"):
        pretrain(TrainingConfig(**SMALL), tmp_path / "never", resume=True, progress=quiet)


def test_progress_says_how_many_heldout_sequences_it_measured(tmp_path):
    messages = []
    _, metrics = run_with_progress(tmp_path, messages)
    periodic = [m for m in messages if m.startswith("held-out")]
    total = metrics["heldout_sequences"]
    assert periodic and all(m.startswith(f"held-out (first 16 of {total:,} sequences)")
                            for m in periodic)
    assert f"final evaluation on all {total:,} held-out sequences" in messages


def run_with_progress(tmp_path, messages):
    out = tmp_path / "talk"
    return out, pretrain(TrainingConfig(**SMALL), out, progress=messages.append)


def test_objectives_and_text_corpus(tmp_path):
    corpus = tmp_path / "corpus.txt"
    documents = []
    for d in range(12):
        documents.append("\n".join(f"document {d} sentence {s} talks about topic {d % 3}."
                                   for s in range(6)))
    corpus.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    out, metrics = pretrain_run(tmp_path, "text", corpus=str(corpus), vocab_size=200)
    assert metrics["corpus_words"] > 0 and (out / "model.safetensors").is_file()
    _, sop = pretrain_run(tmp_path, "sop", objective="sop")
    assert "next_sentence_accuracy" in sop
    _, mlm = pretrain_run(tmp_path, "mlm", objective="mlm")
    assert "next_sentence_accuracy" not in mlm


def test_fill_mask_format(tmp_path):
    out, _ = pretrain_run(tmp_path, "a")
    # the pretraining folder also holds the pooler and the NSP head, which MLM has no use for
    with pytest.warns(UserWarning, match="ignored 4 checkpoint weights"):
        model = mb.BertForMaskedLM.from_pretrained(out)
    tokenizer = mb.BertTokenizer(out / "vocab.txt")
    answers = fill_mask(model, tokenizer, "the [MASK] of the river.", top_k=3)
    assert len(answers) == 3
    assert set(answers[0]) == {"score", "token", "token_str", "sequence"}
    assert answers[0]["score"] >= answers[1]["score"] >= answers[2]["score"]
    assert answers[0]["token_str"] in answers[0]["sequence"]
    two = fill_mask(model, tokenizer, "[MASK] sat on the [MASK].", top_k=2)
    assert len(two) == 2 and all(len(a) == 2 for a in two)
    with pytest.raises(ValueError, match="text must contain '\\[MASK\\]'"):
        fill_mask(model, tokenizer, "no mask here")
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        fill_mask(model, tokenizer, "[MASK]", top_k=0)


# -- bad input ----------------------------------------------------------------------------------

def test_refuses_to_overwrite_a_model(tmp_path):
    out, _ = pretrain_run(tmp_path, "a")
    before = (out / "model.safetensors").read_bytes()
    with pytest.raises(FileExistsError, match="already holds a model; pass --overwrite"):
        pretrain_run(tmp_path, "a")
    assert (out / "model.safetensors").read_bytes() == before
    config = TrainingConfig(**{**SMALL, "steps": 2})
    pretrain(config, out, overwrite=True, progress=quiet)
    assert (out / "model.safetensors").read_bytes() != before


def test_nan_loss_stops_with_the_step_and_keeps_the_checkpoint(tmp_path, monkeypatch):
    config = TrainingConfig(**{**SMALL, "save_every": 2})
    out = tmp_path / "nan"
    original = mb.BertForPreTraining.forward
    calls = {"n": 0}

    def poisoned(self, *args, **kwargs):
        output = original(self, *args, **kwargs)
        if self.training:
            calls["n"] += 1
            if calls["n"] == 3:
                output.loss = float("nan")
        return output

    monkeypatch.setattr(mb.BertForPreTraining, "forward", poisoned)
    with pytest.raises(TrainingDiverged, match="loss became nan at step 3"):
        pretrain(config, out, progress=quiet)
    state = json.loads((out / "checkpoint" / "trainer_state.json").read_text())
    assert state["step"] == 2
    assert len(weights(out / "checkpoint")) > 0


def test_bad_corpora(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        pretrain_run(tmp_path, "e", corpus=str(empty))
    one = tmp_path / "one.txt"
    one.write_text("a single document.\nwith two sentences.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="1 document; next-sentence objectives need at least 2"):
        pretrain_run(tmp_path, "o", corpus=str(one))
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\xe9 au lait.\n".encode("latin-1"))
    with pytest.raises(ValueError, match="UTF-8"):
        pretrain_run(tmp_path, "l", corpus=str(latin))


@pytest.mark.parametrize("field, value", [("steps", 0), ("batch_size", -1), ("objective", "xlm"),
                                          ("preset", "huge"), ("learning_rate", 0.0),
                                          ("dropout", 1.0), ("dropout", -0.1),
                                          ("schedule", "cosine"), ("decay_fraction", 1.5),
                                          ("decay_fraction", -0.1), ("decay_fraction", "0.2"),
                                          ("warmup_fraction", 0.9), ("save_seconds", -1),
                                          ("save_seconds", float("nan")),
                                          ("save_seconds", "60"), ("optimizer", "sgd"),
                                          ("max_grad_norm", 0.0), ("weight_decay", -1.0),
                                          ("token_type_init", "uniform"),
                                          ("balance_next_sentence", 1),
                                          ("next_sentence_weight", 0.0),
                                          ("next_sentence_weight", float("nan")),
                                          ("next_sentence_weight", "3"),
                                          ("num_layers", 0), ("num_layers", 2.0)])
def test_config_validation(field, value):
    with pytest.raises((TypeError, ValueError), match=field):
        TrainingConfig(**{field: value})


def test_cli_errors_are_one_line(tmp_path):
    result = cli("pretrain", "--out", str(tmp_path / "x"), "--steps", "0")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "steps must be >= 1, got 0" in result.stderr
    result = cli("fill-mask", "--model", str(tmp_path / "missing"), "a [MASK]")
    assert result.returncode == 2 and "Traceback" not in result.stderr


# 40 small steps: long enough to be cut short after the first checkpoint, short to run.
COMMON = ["--steps", "40", "--batch-size", "8", "--max-seq-length", "32", "--vocab-size",
          "400", "--num-documents", "80", "--eval-every", "20", "--dropout", "0.1",
          "--schedule", "linear"]


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "ref"
    result = cli("pretrain", "--out", str(out), *COMMON)
    assert result.returncode == 0, result.stderr
    assert not (out / "checkpoint").exists()
    return out


def start_run(out, *extra):
    """A pretrain subprocess, and the resume command it announces on its first line."""
    process = subprocess.Popen([sys.executable, "-m", "minibert", "pretrain", "--out",
                                str(out), *COMMON, *extra], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    STARTED.append(process)
    first = process.stderr.readline()
    assert "resume it with: " in first, first
    return process, shlex.split(first.split("resume it with: ", 1)[1])


def wait_for_checkpoint(out, process, step=1):
    state = out / "checkpoint" / "trainer_state.json"
    deadline = time.time() + 180
    while time.time() < deadline and process.poll() is None:
        if state.is_file() and json.loads(state.read_text())["step"] >= step:
            return
        time.sleep(0.01)
    raise AssertionError(f"no checkpoint of step {step} appeared")


def assert_same_weights(a, b):
    a, b = weights(a), weights(b)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_sigkill_of_a_default_run_then_its_printed_command_resumes_it(tmp_path,
                                                                      reference_run):
    out = tmp_path / "killed"
    process, command = start_run(out)
    assert command[-1] == "--resume" and str(out) in command
    wait_for_checkpoint(out, process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "metrics.json").exists()  # it really was cut short
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed from" in resumed.stderr
    assert_same_weights(reference_run, out)
    assert not (out / "checkpoint").exists()


@pytest.mark.slow
def test_ctrl_c_prints_the_command_that_resumes(tmp_path, reference_run):
    out = tmp_path / "interrupted"
    process, announced = start_run(out)
    wait_for_checkpoint(out, process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    last = stderr.strip().splitlines()[-1]
    assert "interrupted; the checkpoint holds step" in last and "Traceback" not in stderr
    command = shlex.split(last.split("resume with: ", 1)[1])
    assert command == announced
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert_same_weights(reference_run, out)


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_gives_identical_weights(tmp_path, reference_run):
    out = tmp_path / "killed"
    process, command = start_run(out, "--save-every", "2")
    wait_for_checkpoint(out, process, step=4)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "metrics.json").exists()
    resumed = cli("pretrain", "--out", str(out), *COMMON, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert_same_weights(reference_run, out)


@pytest.mark.slow
def test_sigkill_of_a_two_worker_run_then_resume_gives_identical_weights(tmp_path):
    """kill -9 of the parent mid-run (its workers exit with it), then --resume with the same
    two workers: the same weights to the bit as the run never interrupted."""
    two_workers = [*COMMON[:COMMON.index("--dropout")], "--workers", "2"]
    reference = tmp_path / "reference"
    result = cli("pretrain", "--out", str(reference), *two_workers)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "minibert", "pretrain", "--out", str(out),
                                *two_workers, "--save-every", "2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    STARTED.append(process)
    wait_for_checkpoint(out, process, step=4)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "metrics.json").exists()  # it really was cut short
    resumed = cli("pretrain", "--out", str(out), *two_workers, "--save-every", "2", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed from" in resumed.stderr and "2 workers" in resumed.stderr
    assert_same_weights(reference, out)


def test_dropout_setting_reaches_the_model(tmp_path):
    for name, dropout in (("d0", 0.0), ("d2", 0.2)):
        out, _ = pretrain_run(tmp_path, name, dropout=dropout)
        config = json.loads((out / "config.json").read_text())
        assert config["hidden_dropout_prob"] == dropout
        assert config["attention_probs_dropout_prob"] == dropout


# -- data-parallel workers ---------------------------------------------------------------------

def test_workers_resume_bit_identical_and_match_one_process(tmp_path):
    """2 workers: a run cut short and resumed equals the uninterrupted run to the bit; its
    first loss is the single process's (the same weights, the gradient summed in shards)."""
    settings = {**SMALL, "dropout": 0.0, "workers": 2, "save_every": 3}
    messages = []
    reference = tmp_path / "reference"
    pretrain(TrainingConfig(**settings), reference, progress=messages.append)
    assert any("on 2 worker processes" in m for m in messages)
    assert any(m.startswith("step 2/8") and m.endswith("(2 workers)") for m in messages)
    out = tmp_path / "interrupted"

    def stop_at_five(step):
        if step == 5:
            raise Interrupt

    with pytest.raises(Interrupt):
        pretrain(TrainingConfig(**settings), out, progress=quiet, step_hook=stop_at_five)
    with pytest.raises(ValueError, match="workers: checkpoint 2 vs now 1"):
        pretrain(TrainingConfig(**{**settings, "workers": 1}), out, resume=True,
                 progress=quiet)
    pretrain(TrainingConfig(**settings), out, resume=True, progress=quiet)
    assert_same_weights(reference, out)
    single, _ = pretrain_run(tmp_path, "single", dropout=0.0)
    first = [json.loads((folder / "history.json").read_text())[0]["loss"]
             for folder in (reference, single)]
    assert abs(first[0] - first[1]) < 1e-5 * first[1]


def test_workers_settings_are_checked():
    with pytest.raises(ValueError, match="workers"):
        TrainingConfig(workers=0)
    with pytest.raises(ValueError, match="at most batch_size 8"):
        TrainingConfig(**{**SMALL, "dropout": 0.0, "workers": 9})
    with pytest.raises(ValueError, match="needs dropout 0"):
        TrainingConfig(**{**SMALL, "workers": 2})
    from minibert.training.pretrain_config import MAX_DEFAULT_WORKERS, default_workers
    assert 1 <= default_workers() <= MAX_DEFAULT_WORKERS


@pytest.mark.slow
def test_sigkill_with_two_workers_then_resume_gives_identical_weights(tmp_path):
    two = ["--dropout", "0", "--workers", "2", "--save-every", "2"]
    reference = tmp_path / "reference"
    result = cli("pretrain", "--out", str(reference), *COMMON, *two)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "killed"
    process, command = start_run(out, *two)
    wait_for_checkpoint(out, process, step=4)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "metrics.json").exists()
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert "on 2 worker processes" in resumed.stderr
    assert_same_weights(reference, out)


def test_token_type_embeddings_start_at_zero_unless_normal():
    """The recipe's one change to BERT's initialisation (docs/results.md): segment embeddings
    start at 0; "normal" keeps BERT's N(0, 0.02); the other weights are the same either way."""
    from minibert.training.pretrain import prepare_data

    config = TrainingConfig(**SMALL)
    data = prepare_data(config, progress=quiet)
    name = "bert.embeddings.token_type_embeddings.weight"
    zero = dict(Trainer(config, data, progress=quiet).model.named_parameters())
    normal = dict(Trainer(TrainingConfig(**{**SMALL, "token_type_init": "normal"}), data,
                          progress=quiet).model.named_parameters())
    assert config.token_type_init == "zero" and not zero[name].any()
    assert 0.01 < float(normal[name].std()) < 0.03
    assert all(np.array_equal(zero[k], normal[k]) for k in zero if k != name)


def test_training_instances_are_balanced_and_heldout_ones_are_googles_cut():
    """balance_next_sentence trains on 50/50 next-sentence labels and evaluates on the pairs
    as cut; a run saved before the setting existed resumes with Google's cut."""
    from minibert.training.pretrain import prepare_data

    def notnext_share(instances):
        return np.mean([instance.next_sentence_label for instance in instances])

    data = prepare_data(TrainingConfig(**SMALL, balance_next_sentence=True), progress=quiet)
    google = prepare_data(TrainingConfig(**SMALL), progress=quiet)
    assert notnext_share(data.train_instances) == 0.5
    assert notnext_share(google.train_instances) > 0.55
    assert data.heldout_instances == google.heldout_instances
    assert notnext_share(data.heldout_instances) > 0.55
    saved = TrainingConfig(**SMALL, balance_next_sentence=True).to_dict()
    assert TrainingConfig.from_dict(saved).balance_next_sentence is True
    del saved["balance_next_sentence"]
    assert TrainingConfig.from_dict(saved).balance_next_sentence is False


@pytest.mark.parametrize("architecture, objective", [("bert", "nsp"), ("albert", "sop"),
                                                     ("electra", "mlm")])
def test_num_layers_changes_the_depth_alone_and_old_runs_keep_the_presets(architecture,
                                                                           objective):
    preset = trainer_module._model_config(
        TrainingConfig(architecture=architecture, objective=objective), vocab_size=100)
    deeper = trainer_module._model_config(
        TrainingConfig(architecture=architecture, objective=objective, num_layers=4),
        vocab_size=100)
    assert (preset.num_hidden_layers, deeper.num_hidden_layers) == (2, 4)
    assert {k: v for k, v in deeper.to_dict().items() if k != "num_hidden_layers"} == {
        k: v for k, v in preset.to_dict().items() if k != "num_hidden_layers"}
    saved = TrainingConfig(num_layers=4).to_dict()
    assert TrainingConfig.from_dict(saved).num_layers == 4
    del saved["num_layers"]  # a run saved before the setting: the preset's depth
    assert TrainingConfig.from_dict(saved).num_layers is None


def test_the_next_sentence_weight_is_the_recipes_for_nsp_only_and_old_runs_keep_one():
    from minibert.training.pretrain_config import NEXT_SENTENCE_WEIGHT

    assert TrainingConfig().next_sentence_weight == NEXT_SENTENCE_WEIGHT
    assert TrainingConfig(next_sentence_weight=2.5).next_sentence_weight == 2.5
    for architecture, objective in (("bert", "mlm"), ("albert", "sop"), ("albert", "mlm")):
        config = TrainingConfig(architecture=architecture, objective=objective)
        assert config.next_sentence_weight == 1.0
        with pytest.raises(ValueError, match=f"next_sentence_weight applies to objective "
                                             f"'nsp' only; objective '{objective}' needs 1, "
                                             f"got 2.0"):
            TrainingConfig(architecture=architecture, objective=objective,
                           next_sentence_weight=2.0)
    saved = TrainingConfig(next_sentence_weight=2.5).to_dict()
    assert saved["next_sentence_weight"] == 2.5  # written out, never None
    assert TrainingConfig.from_dict(saved).next_sentence_weight == 2.5
    del saved["next_sentence_weight"]  # a run saved before the setting: the plain sum
    assert TrainingConfig.from_dict(saved).next_sentence_weight == 1.0


def test_the_trainer_weighs_the_next_sentence_loss_in_one_process_and_with_workers():
    """One step of a run with next_sentence_weight 3: its first Adam moment (0.1 x the
    clipped gradient) equals a step of MLM + 3 x NSP made by hand, differs from the plain
    sum's, and two workers give it to float32 rounding."""
    from minibert.training.loop import train_step
    from minibert.training.pretrain import model_inputs, prepare_data

    def config(weight, workers=1):
        return TrainingConfig(**{**SMALL, "steps": 1, "dropout": 0.0, "save_seconds": 0,
                                 "next_sentence_weight": weight, "workers": workers})

    def first_moment(config):
        trainer = Trainer(config, prepare_data(config, progress=quiet), progress=quiet)
        trainer.train(None)
        return trainer.optimizer.flat_exp_avg.astype(np.float64)

    def rel(a, b):
        return float(np.linalg.norm(a - b) / np.linalg.norm(b))

    by_hand = Trainer(config(1.0), prepare_data(config(1.0), progress=quiet), progress=quiet)
    batch = next(by_hand.data.train_batches)
    train_step(by_hand.model, model_inputs(by_hand.model, batch), by_hand.optimizer,
               by_hand.config.max_grad_norm, {"nsp_weight": 3.0})
    expected = by_hand.optimizer.flat_exp_avg.astype(np.float64)

    weighted = first_moment(config(3.0))
    assert rel(weighted, expected) < 1e-6
    assert rel(first_moment(config(1.0)), expected) > 1e-2  # the weight is visible
    assert rel(first_moment(config(3.0, workers=2)), expected) < 1e-4
