"""Attention snapshots during pretraining: the same sentence pair every K steps.

``pretrain --snapshot-every K`` runs the model (dropout off) on one fixed sentence pair
before the first step and after every K steps, and keeps its attention probabilities in
``attention_snapshots.npz`` in the output folder, rewritten atomically after each record
(so an interrupted run keeps what it recorded; a resumed run drops any snapshot past the
step it resumes from). The explorer's timeline replays them with a step slider
(``explore(..., timeline=folder)``, ``minibert explore --timeline``), showing heads taking
on their jobs. The file is an ``.npz`` read with ``allow_pickle=False``.

Dimension legend: S snapshots, L layers, N heads, T tokens.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from minibert.checks import check_int
from minibert.io.fileio import atomic_write_bytes
from minibert.training.loop import eval_mode

__all__ = ["SNAPSHOT_FILE", "SNAPSHOT_PAIR", "AttentionSnapshots", "snapshot_hook",
           "load_snapshots"]

SNAPSHOT_FILE = "attention_snapshots.npz"
# A pair from the toy world's two senses of "bank", as in notebook 08.
SNAPSHOT_PAIR = ("the river ran fast past the muddy bank.",
                 "she deposited the money at the bank.")


class AttentionSnapshots:
    """Records the attention of one sentence pair every ``every`` steps into ``out_dir``.

    Inputs:
        tokenizer: the run's tokenizer; every: K >= 1; out_dir: the run's output folder;
        start_step: the step the run starts from (0, or a resumed run's step): snapshots
            already in the folder past it are dropped, earlier ones kept.
    """

    def __init__(self, tokenizer, every: int, out_dir, start_step: int = 0,
                 pair: tuple[str, str] = SNAPSHOT_PAIR) -> None:
        self.every = check_int("snapshot_every", every, minimum=1)
        self.path = Path(out_dir) / SNAPSHOT_FILE
        self.encoding = tokenizer(*pair, return_tensors="np")
        self.tokens = tokenizer.convert_ids_to_tokens(self.encoding["input_ids"][0].tolist())
        self.steps: list[int] = []
        self.attentions: list[np.ndarray] = []  # S x (L, N, T, T) float16
        if start_step > 0 and self.path.is_file():
            saved = load_snapshots(self.path)
            if list(saved["tokens"]) == self.tokens:
                kept = saved["steps"] <= start_step
                self.steps = saved["steps"][kept].tolist()
                self.attentions = list(saved["attentions"][kept].astype(np.float16))

    def record(self, model, step: int) -> None:
        """Run the pair through ``model`` (dropout off) and save the snapshot of ``step``."""
        with eval_mode(model):
            out = model(**{k: self.encoding[k] for k in ("input_ids", "token_type_ids",
                                                          "attention_mask")},
                        output_attentions=True)
        self.steps.append(int(step))
        self.attentions.append(np.stack([a[0] for a in out.attentions]).astype(np.float16))
        self.save()

    def save(self) -> None:
        buffer = io.BytesIO()
        np.savez(buffer, steps=np.asarray(self.steps, dtype=np.int64),
                 attentions=np.stack(self.attentions),  # (S, L, N, T, T)
                 tokens=np.asarray(self.tokens, dtype=str),
                 token_type_ids=self.encoding["token_type_ids"][0].astype(np.int64))
        atomic_write_bytes(self.path, buffer.getvalue())


def snapshot_hook(every: int, model, tokenizer, out_dir, start_step: int,
                  step_hook: Callable[[int], None] | None) -> Callable[[int], None] | None:
    """The pretraining step hook with snapshots added every ``every`` steps (0: none).

    Records the model before its first step when the run starts from step 0; then calls
    ``step_hook`` (the caller's, may be None) after every step as before.
    """
    if not check_int("snapshot_every", every, minimum=0):
        return step_hook
    snapshots = AttentionSnapshots(tokenizer, every, out_dir, start_step)
    if start_step == 0:
        snapshots.record(model, 0)

    def hook(step: int) -> None:
        if step % every == 0:
            snapshots.record(model, step)
        if step_hook is not None:
            step_hook(step)

    return hook


def load_snapshots(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read ``attention_snapshots.npz`` (or the folder holding it).

    Returns:
        dict: ``steps`` (S,), ``attentions`` (S, L, N, T, T) float16, ``tokens`` (T,),
        ``token_type_ids`` (T,).
    """
    path = Path(path)
    if path.is_dir():
        path = path / SNAPSHOT_FILE
    if not path.is_file():
        raise ValueError(f"timeline: {str(path)!r} does not exist; record snapshots with "
                         f"`minibert pretrain --snapshot-every K` (or "
                         f"TrainingConfig(snapshot_every=K))")
    with np.load(path, allow_pickle=False) as archive:
        data = {name: archive[name] for name in ("steps", "attentions", "tokens",
                                                 "token_type_ids")}
    if data["steps"].size == 0:
        raise ValueError(f"timeline: {str(path)!r} holds no snapshot")
    return data
