"""Pretraining: the MLM + NSP loop, held-out evaluation, atomic checkpoints, exact resume.

``pretrain(TrainingConfig(...), out_dir)`` runs the whole job: make (or read) a corpus,
learn a WordPiece vocabulary, cut pretraining instances (``prepare_data``), train a
BertForPreTraining (``Trainer``), evaluate on held-out documents (``evaluate``), and write
a folder that ``from_pretrained`` loads (config.json, model.safetensors, vocab.txt) plus
metrics.json and history.json.

A run is a pure function of its TrainingConfig. A checkpoint holds the weights, the
optimizer moments, the dropout generator's state and the batch stream's position, so a
resumed run continues bit-identically. It is written into a staging folder and swapped in
(``minibert.io.fileio.atomic_folder``), so a run killed at any moment leaves a complete one.
SIGINT, SIGTERM and SIGHUP do not kill a run mid-step: the step finishes, a checkpoint of
it is written and ``RunInterrupted`` (a KeyboardInterrupt) is raised. The output folder is
locked while a run writes into it (``minibert.io.fileio.run_folder``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from minibert.family.registry import FAMILIES
from minibert.io import safetensors
from minibert.io.checkpoint import CONFIG_NAME, WEIGHTS_NAME
from minibert.io.fileio import (
    atomic_folder,
    atomic_write_json,
    clear_run_files,
    folder_versions,
    remove_folder,
    run_folder,
)
from minibert.training.loop import TrainingDiverged
from minibert.training.optim import make_optimizer
from minibert.training.pretrain_config import TrainingConfig
from minibert.training.pretrain_data import PreparedData, prepare_data
from minibert.training.pretrain_eval import (
    evaluate,
    evaluate_pretrained,
    model_inputs,
    unigram_baseline_accuracy,
)
from minibert.training.schedules import make_schedule
from minibert.training.snapshots import snapshot_hook
from minibert.training.transport import (
    STOP_SIGNALS,
    OneProcess,
    RunInterrupted,
    Transport,
    refuse_ranks_without_world,
)
from minibert.training.workers import DataParallel, WorkerError

__all__ = ["TrainingConfig", "TrainingDiverged", "RunInterrupted", "StopSignals", "Trainer",
           "pretrain",
           "evaluate", "evaluate_pretrained", "unigram_baseline_accuracy", "prepare_data",
           "checkpoint_step"]

CHECKPOINT_DIR = "checkpoint"
OPTIMIZER_NAME = "optimizer.safetensors"  # in the checkpoint folder, beside the model's files
STATE_NAME = "trainer_state.json"


class StopSignals(list):
    """The stop signals received so far (numbers), and whether a checkpoint is being saved.

    ``source`` names the process that received the first one when it was not this one.
    """

    def __init__(self) -> None:
        super().__init__()
        self.saving = False
        self.source: str | None = None

    def add(self, signum: int, source: str | None = None) -> None:
        if not self:
            self.source = source
        if signum not in self:
            self.append(signum)

    @contextlib.contextmanager
    def hold(self):
        """While saving, a further signal is only recorded: the checkpoint is finished first."""
        self.saving = True
        try:
            yield
        finally:
            self.saving = False


@contextlib.contextmanager
def _deferred_stop_signals(immediate: bool = True):
    """Record SIGINT/SIGTERM/SIGHUP instead of dying mid-step; yields a ``StopSignals``.

    A second signal of the same kind raises RunInterrupted at once (a user who presses
    Ctrl-C twice does not want to wait), except while a checkpoint is being saved: that
    save finishes first. ``immediate=False`` (an MPI rank) only records: a rank that left
    alone would leave the others waiting for it, and the step under way ends soon anyway.
    Outside the main thread signals cannot be caught: nothing is installed and the list
    stays empty.
    """
    received = StopSignals()
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum, frame):
        if immediate and signum in received and not received.saving:
            raise RunInterrupted(signum, None)
        received.add(signum)

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield received
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _model_config(config: TrainingConfig, vocab_size: int):
    """The config of the architecture's model: its family's preset at the job's sizes.

    ALBERT and ELECTRA take E from their own preset (64 for tiny); ELECTRA's is the
    discriminator's config (ElectraPreTrainer derives the generator, 1/4 wide); ALBERT's
    sentence-order head also takes TrainingConfig.dropout.
    """
    layers = {} if config.num_layers is None else {"num_hidden_layers": config.num_layers}
    dropout = {"hidden_dropout_prob": config.dropout,
               "attention_probs_dropout_prob": config.dropout}
    family = FAMILIES[config.architecture]
    if family.pair_head_dropout:
        dropout[family.pair_head_dropout] = config.dropout
    return family.config_class.preset(
        config.preset, vocab_size=vocab_size, **layers,
        max_position_embeddings=max(128, config.max_seq_length), **dropout)


class Trainer:
    """The pretraining loop over a prepared data stream, with checkpoints and history."""

    def __init__(self, config: TrainingConfig, data: PreparedData,
                 progress: Callable[[str], None] = print, world=None) -> None:
        self.config = config
        # The MPI world when this is one of its ranks (what minibert.training.transport
        # says a world offers), else None.
        self.world = world
        self.data = data
        self.progress = progress
        model_class = FAMILIES[config.architecture].pretraining
        self.model = model_class(_model_config(config, len(data.tokenizer)), seed=config.seed)
        if config.token_type_init == "zero":
            # Before the optimizer copies the weights into its flat buffer.
            for name, weight in self.model.named_parameters():
                if name.endswith("embeddings.token_type_embeddings.weight"):
                    weight[...] = 0.0
        warmup = int(config.warmup_fraction * config.steps)
        schedule = make_schedule(config.schedule, config.learning_rate, warmup_steps=warmup,
                                 total_steps=config.steps,
                                 decay_steps=int(config.decay_fraction * config.steps))
        self.optimizer = make_optimizer(config.optimizer, self.model, lr=schedule,
                                        weight_decay=config.weight_decay)
        self.step = 0
        self.history: list[dict] = []
        self.train_seconds = 0.0
        self._saved_at: float | None = None  # train_seconds at the last checkpoint
        self._save_cost = 0.0  # seconds the last checkpoint took to write

    # -- checkpoints -------------------------------------------------------------------------
    def save_checkpoint(self, out_dir: Path) -> Path:
        """Write checkpoint/ atomically: a complete new folder replaces the old one."""
        start = time.perf_counter()
        folder = out_dir / CHECKPOINT_DIR
        with atomic_folder(folder) as staging:
            self.model.save_pretrained(staging)
            safetensors.save_file(self.optimizer.state_dict(), staging / OPTIMIZER_NAME)
            atomic_write_json(staging / STATE_NAME, {
                "step": self.step,
                "training_config": self.config.to_dict(),
                "batches": self.data.train_batches.state_dict(),
                "dropout_rng": self.model.dropout_rng.bit_generator.state,
                "history": self.history,
                "train_seconds": self.train_seconds,
            })
        self._saved_at = self.train_seconds
        self._save_cost = time.perf_counter() - start
        return folder

    def checkpoint_due(self) -> bool:
        """Whether the step just taken should be followed by a checkpoint (see TrainingConfig)."""
        config = self.config
        if config.save_every and (self.step % config.save_every == 0
                                  or self.step == config.steps):
            return True
        if not config.save_seconds:
            return False
        if self._saved_at is None or self.step == config.steps:
            return True
        # A model whose checkpoint is slow to write (BERT-Base: seconds) is saved less often,
        # so that checkpoints never cost more than about 1% of the training time.
        interval = max(config.save_seconds, 100 * self._save_cost)
        return self.train_seconds - self._saved_at >= interval

    @staticmethod
    def remove_checkpoint(out_dir: Path) -> None:
        """Delete the checkpoint of ``out_dir`` (and what a cut-short swap left of it)."""
        remove_folder(out_dir / CHECKPOINT_DIR)

    @staticmethod
    def find_checkpoint(out_dir: Path) -> Path | None:
        """The newest complete checkpoint folder (the old one if a swap was cut short)."""
        for candidate in folder_versions(out_dir / CHECKPOINT_DIR):
            if (candidate / STATE_NAME).is_file():
                return candidate
        return None

    @staticmethod
    def read_checkpoint_state(folder: Path, config: TrainingConfig) -> dict:
        """The checkpoint's trainer_state.json, refused unless ``config`` continues its run.

        Reads only that small file, so a mismatch is reported before any data preparation.
        """
        state = _read_state(folder)
        saved = state["training_config"]
        differences = {k: (v, getattr(config, k)) for k, v in saved.to_dict().items()
                       if k not in ("steps", "save_every", "save_seconds", "log_every",
                                    "eval_every")
                       and v != getattr(config, k)}
        if differences:
            shown = ", ".join(f"{k}: checkpoint {a!r} vs now {b!r}"
                              for k, (a, b) in differences.items())
            raise ValueError(f"--resume needs the settings of the interrupted run; {shown}")
        if saved.steps != config.steps:
            raise ValueError(f"--resume needs the same --steps as the interrupted run "
                             f"({saved.steps}), got {config.steps}")
        return state

    def load_checkpoint(self, folder: Path, state: dict | None = None) -> None:
        """Continue from ``folder``; ``state`` is its read_checkpoint_state when already read."""
        if state is None:
            state = self.read_checkpoint_state(folder, self.config)
        weights = safetensors.load_file(folder / WEIGHTS_NAME, mmap=False)
        generator = FAMILIES[self.config.architecture].generator_folder
        if generator:  # a second model's folder inside (ELECTRA's generator)
            weights = self.model.state_from_folders(weights, safetensors.load_file(
                folder / generator / WEIGHTS_NAME, mmap=False))
        self.model.load_state_dict(weights)
        self.optimizer.load_state_dict(safetensors.load_file(folder / OPTIMIZER_NAME,
                                                             mmap=False))
        try:
            self.data.train_batches.load_state_dict(state["batches"])
            self.model.dropout_rng.bit_generator.state = state["dropout_rng"]
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{str(folder / STATE_NAME)!r}: its batch or dropout state does "
                             f"not fit this run ({error}); {_DAMAGED}") from None
        self.step = int(state["step"])
        self.history = list(state["history"])
        self.train_seconds = float(state["train_seconds"])
        self._saved_at = self.train_seconds

    # -- the loop ----------------------------------------------------------------------------
    def evaluate(self) -> dict[str, float]:
        """Held-out metrics on the first ``eval_batches`` batches."""
        return evaluate(self.model, self.data.heldout_batches(self.config.batch_size,
                                                              self.config.eval_batches))

    def train(self, out_dir: Path | None = None,
              step_hook: Callable[[int], None] | None = None,
              stop_signals: StopSignals | None = None) -> None:
        """Run until ``config.steps``, checkpointing into out_dir when checkpoint_due().

        When a signal lands in ``stop_signals`` (see ``_deferred_stop_signals``), or a
        worker reports one, the step under way finishes, a checkpoint of that step is
        written and RunInterrupted raised.
        """
        try:
            self._train(out_dir, step_hook, stop_signals)
        except WorkerError as error:
            if error.signum in STOP_SIGNALS:  # a stop signal reached a worker before it
                # could catch it (while starting): the run stops as that signal asks
                raise RunInterrupted(error.signum, None, f"worker {error.rank}") from None
            if not stop_signals:
                raise
            # The signal reached a worker before it could catch it (while starting): the
            # run stops as the signal asked, from the checkpoint on disk.
            raise RunInterrupted(stop_signals[0], None, stop_signals.source) from None

    def _train(self, out_dir, step_hook, stop_signals) -> None:
        config, model = self.config, self.model
        if self.world is not None:
            self.world.start()  # every rank is ready, or every rank stops here
        model.train()
        batches = self.data.train_batches
        tokens_seen, window_start = 0, time.perf_counter()
        with self._transport() as transport:
            while self.step < config.steps:
                step_start = time.perf_counter()
                batch = next(batches)
                lr = self.optimizer.current_lr
                # This process's stop request rides the step; ``result.stop`` is the one
                # every process of the run agreed on (minibert.training.transport).
                result = transport.step(model_inputs(model, batch),
                                        lambda: stop_signals[0] if stop_signals else 0)
                if result.stop and stop_signals is not None:
                    stop_signals.add(result.stop, result.source)
                self.step += 1
                self.train_seconds += time.perf_counter() - step_start
                tokens_seen += int(batch.attention_mask.sum())
                if self.step % config.log_every == 0 or self.step == 1:
                    self.history.append(self._train_record(batch, result.out, lr,
                                                           result.grad_norm, result.loss))
                    elapsed = time.perf_counter() - window_start
                    rate = tokens_seen / max(elapsed, 1e-9)
                    per_step = self.train_seconds / self.step
                    eta = per_step * (config.steps - self.step)
                    self.progress(f"step {self.step}/{config.steps}  loss {result.loss:.4f}  "
                                  f"lr {lr:.2e}  {rate:,.0f} tokens/s  ETA {eta:.0f} s"
                                  + (f"  ({self._processes()})"
                                     if transport.num_workers > 1 else ""))
                if (self.step % config.eval_every == 0 or self.step == config.steps) \
                        and transport.writes:
                    transport.pull()
                    metrics = self.evaluate()
                    self.history.append({"step": self.step, "split": "heldout", **metrics})
                    total = len(self.data.heldout_instances)
                    measured = min(total, config.eval_batches * config.batch_size)
                    self.progress(f"held-out (first {measured:,} of {total:,} sequences)  "
                                  + "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
                # Only the agreed stop counts: a signal that arrived after this step's
                # messages rides the next step (acting on it alone is how runs hang).
                stopping = bool(result.stop)
                if out_dir is not None and transport.writes \
                        and (stopping or self.checkpoint_due()):
                    with stop_signals.hold() if stop_signals is not None \
                            else contextlib.nullcontext():
                        transport.pull()
                        self.save_checkpoint(out_dir)
                if stopping:
                    interrupted = RunInterrupted(result.stop, self.step if out_dir else None,
                                                 result.source)
                    interrupted.agreed = True
                    raise interrupted
                if step_hook is not None:
                    step_hook(self.step)
            transport.pull()

    def _processes(self) -> str:
        """How the steps are run, for the progress lines: '2 workers', '4 MPI ranks'."""
        return (f"{self.world.size} MPI ranks" if self.world is not None
                else f"{self.config.workers} workers")

    def _transport(self) -> Transport:
        """How the steps are taken: this rank's side of MPI, a DataParallel of
        ``config.workers`` processes, or this process alone."""
        if self.world is not None:
            return self.world.transport(self.model, self.optimizer,
                                        clip=self.config.max_grad_norm,
                                        pair_loss_weight=self.config.next_sentence_weight)
        if self.config.workers == 1:
            return OneProcess(self.model, self.optimizer, self.config.max_grad_norm,
                              self._loss_weights())
        return DataParallel(self.model, self.optimizer, self.config.workers,
                            clip=self.config.max_grad_norm, seed=self.config.seed,
                            pair_loss_weight=self.config.next_sentence_weight)

    def _loss_weights(self) -> dict | None:
        """``model.backward``'s weights for the objective: the NSP loss's, when not 1."""
        weight = self.config.next_sentence_weight
        return None if weight == 1 else {FAMILIES[self.config.architecture].pair_weight: weight}

    def _train_record(self, batch, out, lr: float, grad_norm: float, loss: float) -> dict:
        """The history entry of a training step: its loss, learning rate and accuracies.

        ``out`` is None when workers trained the step: only the loss is known then.
        """
        record = {"step": self.step, "split": "train", "loss": loss, "lr": lr,
                  "grad_norm": grad_norm}
        if out is None:
            return record
        record["masked_lm_loss"] = out.masked_lm_loss
        targets = batch.labels[out.masked_lm_positions]
        if targets.size:
            record["masked_lm_accuracy"] = float(
                (out.masked_lm_logits.argmax(-1) == targets).mean())
        if out.next_sentence_loss is not None:
            record["next_sentence_loss"] = out.next_sentence_loss
            record["next_sentence_accuracy"] = float(
                (out.seq_relationship_logits.argmax(-1) == batch.next_sentence_label).mean())
        return record


# ------------------------------------------------------------------------------------------
# The whole job
# ------------------------------------------------------------------------------------------


_DAMAGED = "the checkpoint is damaged; start the run again with --overwrite"


def _read_state(folder: Path) -> dict:
    """A checkpoint's trainer_state.json, checked field by field; errors name the file."""
    path = folder / STATE_NAME
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{str(path)!r} is not valid JSON ({error}); {_DAMAGED}") from None
    try:
        if not isinstance(state, dict):
            raise ValueError(f"expected an object, got {type(state).__name__}")
        missing = [key for key in ("step", "training_config", "batches", "dropout_rng",
                                   "history", "train_seconds") if key not in state]
        if missing:
            raise ValueError(f"{', '.join(missing)} missing")
        saved = TrainingConfig.from_dict(state["training_config"])
        step = state["step"]
        if type(step) is not int or not 1 <= step <= saved.steps:
            raise ValueError(f"step must be a whole number in 1..{saved.steps} (the run's "
                             f"steps), got {step!r}")
        seconds = state["train_seconds"]
        if type(seconds) not in (int, float) or not 0 <= seconds < float("inf"):
            raise ValueError(f"train_seconds must be a number >= 0, got {seconds!r}")
        if not isinstance(state["history"], list) or not isinstance(state["batches"], dict) \
                or not isinstance(state["dropout_rng"], dict):
            raise ValueError("history must be a list, batches and dropout_rng objects")
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{str(path)!r}: {error}; {_DAMAGED}") from None
    return {**state, "training_config": saved}


def _check_out_dir(out_dir: Path, config: TrainingConfig, resume: bool,
                   overwrite: bool) -> tuple[Path, dict] | None:
    """Refuse an --out that cannot be used; when resuming, the checkpoint and its state."""
    checkpoint = Trainer.find_checkpoint(out_dir)
    if resume:
        if checkpoint is None and (out_dir / "metrics.json").is_file():
            raise FileNotFoundError(f"--resume: {str(out_dir)!r} holds a finished run (its "
                                    f"checkpoint is removed at the end); nothing to resume")
        if checkpoint is None:
            raise FileNotFoundError(f"--resume: {str(out_dir)!r} holds no checkpoint to resume "
                                    f"(a run writes its first one after step 1)")
        return checkpoint, Trainer.read_checkpoint_state(checkpoint, config)
    if overwrite:
        return None
    if checkpoint is not None:
        raise FileExistsError(f"--out {str(out_dir)!r} holds the checkpoint of an interrupted "
                              f"run; pass --resume to continue it or --overwrite to start again")
    if any((out_dir / f).exists() for f in (WEIGHTS_NAME, CONFIG_NAME)):
        raise FileExistsError(f"--out {str(out_dir)!r} already holds a model; pass --overwrite "
                              f"to replace it")
    return None


def checkpoint_step(out_dir: str | os.PathLike) -> int | None:
    """The step of the checkpoint a --resume of ``out_dir`` would continue from, if any."""
    folder = Trainer.find_checkpoint(Path(out_dir))
    if folder is None:
        return None
    try:
        return _read_state(folder)["step"]
    except (OSError, ValueError):
        return None


def pretrain(config: TrainingConfig, out_dir: str | os.PathLike, *, resume: bool = False,
             overwrite: bool = False, progress: Callable[[str], None] | None = None,
             step_hook: Callable[[int], None] | None = None,
             resume_command: str | None = None, world=None) -> dict:
    """Run a pretraining job into ``out_dir``; returns the final metrics (also metrics.json).

    ``resume_command``, when given, is announced at the start as the way to continue the
    run if it is cut short (the command line passes its own invocation with --resume).
    ``out_dir`` is locked for the run: another live run's folder is refused (FolderInUse,
    naming its pid), a dead one's taken over. Without ``resume``, what an earlier run wrote
    there (only minibert's files) is removed; a signal ends the run with a checkpoint of the
    step it interrupted (RunInterrupted).

    ``world``: on MPI ranks, each rank's world (``minibert.bridges.mpi.world()``, which the
    command line passes under mpiexec): every rank trains its shard of each batch, rank 0
    alone writes and returns the metrics (the others return {}). ``config.workers`` must
    be the number of ranks; a process that a launcher started as one of several ranks is
    refused without its world.
    """
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    out_dir = Path(out_dir)
    refuse_ranks_without_world(world, "pretrain")
    try:
        # Inside the try: a rank that refuses them tells the others (``world.fail``), which
        # may see another folder when the ranks share no file system.
        _check_arguments(config, out_dir, resume, overwrite, world)
        if world is not None:  # what the run's witness names if every rank is killed at once
            world.describe_run(out_dir, resume_command)
        if world is not None and world.rank > 0:
            # Another rank of an MPI job: it trains its shards and writes nothing.
            return _pretrain_locked(config, out_dir, resume, overwrite, lambda message: None,
                                    None, None, world)
        # The folder is locked for the whole run: a second run into it is refused while this
        # one lives (and may take over once it has died).
        with run_folder(out_dir, notice=progress):
            return _pretrain_locked(config, out_dir, resume, overwrite, progress, step_hook,
                                    resume_command, world)
    except BaseException as error:
        if world is not None and not world.started:
            world.fail(error)  # the other ranks, waiting to start, stop with this one
        elif world is not None and not world.finished and not getattr(error, "agreed", False):
            # Only this rank failed: the others would wait for it for ever in the next
            # all-reduce. One line, then MPI_Abort ends every rank.
            world.abort(error)
        raise


def _check_arguments(config: TrainingConfig, out_dir: Path, resume: bool, overwrite: bool,
                     world) -> None:
    """Refuse an --out that is no folder, --resume with --overwrite or with nothing to
    resume, and a world whose number of ranks is not ``config.workers``."""
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"--out {str(out_dir)!r} exists and is not a folder")
    if resume and overwrite:
        raise ValueError("--resume and --overwrite contradict each other; choose one")
    if resume and not out_dir.is_dir():
        raise FileNotFoundError(f"--resume: {str(out_dir)!r} does not exist; nothing to "
                                f"resume")
    if world is not None and config.workers != world.size:
        raise ValueError(f"workers (--workers) must be the number of MPI ranks {world.size} "
                         f"when started by an MPI launcher (each rank trains one shard), got "
                         f"{config.workers}")


def _pretrain_locked(config: TrainingConfig, out_dir: Path, resume: bool, overwrite: bool,
                     progress: Callable[[str], None],
                     step_hook: Callable[[int], None] | None,
                     resume_command: str | None, world=None) -> dict:
    job_start = time.perf_counter()
    if world is not None and world.rank > 0:
        return _pretrain_other_rank(config, out_dir, resume, world)
    checkpoint = _check_out_dir(out_dir, config, resume, overwrite)
    if overwrite:
        # Only what a previous run wrote goes (its checkpoint too: a replaced run's
        # checkpoint must never be resumed as if it were this run's); a user's files stay.
        clear_run_files(out_dir)
    if not resume:
        Trainer.remove_checkpoint(out_dir)
    if config.save_seconds or config.save_every:
        when = (f"every {config.save_seconds:g} s of training" if config.save_seconds
                else f"every {config.save_every} steps")
        if config.save_seconds and config.save_every:
            when += f" and every {config.save_every} steps"
        first = "" if resume else "after step 1, then "
        # The folder is not named: notebooks print this line, and a reader should not see
        # where they were executed.
        message = f"checkpoints: into {CHECKPOINT_DIR}/ of the output folder, {first}{when}"
        if resume_command:
            message += f"; if the run is cut short, resume it with: {resume_command}"
        progress(message)
    data = prepare_data(config, progress)
    if config.batch_size > len(data.train_instances):
        raise ValueError(f"batch_size (--batch-size) {config.batch_size:,} is more than the "
                         f"{len(data.train_instances):,} training instances; allowed: at most "
                         f"{len(data.train_instances):,} (or a larger corpus)")
    trainer = Trainer(config, data, progress, world)
    if checkpoint is not None:
        folder, state = checkpoint
        trainer.load_checkpoint(folder, state)
        progress(f"resumed from {folder} at step {trainer.step}")
    step_hook = snapshot_hook(config.snapshot_every, trainer.model, data.tokenizer, out_dir,
                              trainer.step, step_hook)
    params = trainer.model.num_parameters()
    layers = "" if config.num_layers is None else f" with {config.num_layers} layers"
    progress(f"model: {type(trainer.model).__name__} preset {config.preset!r}{layers}, {params:,} "
             f"parameters; training {config.steps} steps of {config.batch_size} sequences"
             + (f" on {world.size} MPI ranks" if world is not None else
                f" on {config.workers} worker processes" if config.workers > 1 else
                " in this process"))
    # Overflow or an invalid operation stops the run at once instead of spreading NaNs.
    with np.errstate(over="raise", invalid="raise", divide="raise"), \
            _deferred_stop_signals(world is None) as stop_signals:
        try:
            trainer.train(out_dir, step_hook, stop_signals)
            if world is not None:
                world.finished = True  # every rank left the loop at the same step
        except FloatingPointError as error:
            raise TrainingDiverged(f"numerical overflow at step {trainer.step + 1}: {error}; "
                                   f"the last checkpoint, if any, is intact") from None
    # The final metrics use every held-out instance (the periodic ones only eval_batches).
    progress(f"final evaluation on all {len(data.heldout_instances):,} held-out sequences")
    heldout = list(data.heldout_batches(config.batch_size))
    final = evaluate(trainer.model, heldout)
    metrics = {
        **final,
        "unigram_baseline_accuracy": unigram_baseline_accuracy(data.train_instances, heldout),
        "heldout_sequences": len(data.heldout_instances),
        "steps": trainer.step,
        "train_seconds": round(trainer.train_seconds, 2),
        "total_seconds": round(time.perf_counter() - job_start, 2),
        "parameters": params,
        "vocab_size": len(data.tokenizer),
        "corpus_words": data.corpus_words,
        "objective": config.objective,
        "seed": config.seed,
    }
    trainer.model.save_pretrained(out_dir, tokenizer=data.tokenizer)
    atomic_write_json(out_dir / "history.json", trainer.history)
    atomic_write_json(out_dir / "training_config.json", config.to_dict())
    atomic_write_json(out_dir / "metrics.json", metrics)
    Trainer.remove_checkpoint(out_dir)  # the finished model supersedes it
    return metrics


def _pretrain_other_rank(config: TrainingConfig, out_dir: Path, resume: bool, world) -> dict:
    """Rank r > 0 of an MPI job: the same data and weights as rank 0, its own shards.

    It reads the checkpoint to resume (rank 0 writes the next one only after every rank
    has taken the first step, which needs this rank's gradient) and writes nothing.
    Returns {}: the metrics are rank 0's.
    """
    checkpoint = _check_out_dir(out_dir, config, True, False) if resume else None
    data = prepare_data(config, lambda message: None)
    trainer = Trainer(config, data, lambda message: None, world)
    if checkpoint is not None:
        trainer.load_checkpoint(*checkpoint)
    with np.errstate(over="raise", invalid="raise", divide="raise"), \
            _deferred_stop_signals(world is None) as stop_signals:
        try:
            trainer.train(None, None, stop_signals)
            world.finished = True
        except FloatingPointError as error:
            raise TrainingDiverged(f"numerical overflow at step {trainer.step + 1}: "
                                   f"{error}") from None
    # Its part is done (rank 0 alone evaluates and writes now): a signal to this rank has
    # nothing left to stop, and dying of it would make the launcher end rank 0's writing.
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    return {}
