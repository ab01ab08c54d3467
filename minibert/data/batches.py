"""Batches for pretraining: instances padded into the NumPy arrays the model takes.

``collate_instances`` pads masked instances into one ``PretrainingBatch``;
``PretrainingBatches`` is an endless, resumable stream of them that shuffles every epoch and
masks dynamic instances afresh. Labels follow HF: ``labels`` holds ``IGNORE_INDEX`` (-100)
wherever there is no MLM target. See ``docs/data.md``, section 4.

Dimension legend: B batch, T sequence length, P max predictions per sequence.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from minibert.checks import IGNORE_INDEX, check_bool, check_int
from minibert.data.masking import as_pretraining_vocab, mask_tokens
from minibert.data.pretraining import PretrainingDataConfig, PretrainingInstance

__all__ = ["PretrainingBatch", "PretrainingBatches", "collate_instances"]

# Streams of randomness the batch iterator derives from its seed (see PretrainingBatches).
_ORDER_STREAM = 0
_MASKING_STREAM = 1


@dataclass(frozen=True, eq=False)
class PretrainingBatch:
    """Padded arrays for a batch of instances, in HF's and Google's conventions.

    input_ids (B, T) int64 masked ids, [PAD] after the end; token_type_ids (B, T) int64;
    attention_mask (B, T) int64, 1 real / 0 padding; labels (B, T) int64, the original id at
    each MLM target and -100 elsewhere; next_sentence_label (B,) int64 or None for "mlm";
    masked_lm_positions / masked_lm_ids (B, P) int64 and masked_lm_weights (B, P) float32,
    1.0 for a real target and 0.0 for padding (Google's layout).
    """

    input_ids: np.ndarray  # (B, T)
    token_type_ids: np.ndarray  # (B, T)
    attention_mask: np.ndarray  # (B, T)
    labels: np.ndarray  # (B, T)
    next_sentence_label: np.ndarray | None  # (B,)
    masked_lm_positions: np.ndarray  # (B, P)
    masked_lm_ids: np.ndarray  # (B, P)
    masked_lm_weights: np.ndarray  # (B, P)

    def model_inputs(self) -> dict[str, np.ndarray]:
        """The keyword arguments of ``BertForPreTraining.__call__`` (no NSP label for "mlm")."""
        inputs = {
            "input_ids": self.input_ids,
            "token_type_ids": self.token_type_ids,
            "attention_mask": self.attention_mask,
            "labels": self.labels,
        }
        if self.next_sentence_label is not None:
            inputs["next_sentence_label"] = self.next_sentence_label
        return inputs


def collate_instances(
    instances: list[PretrainingInstance],
    pad_token_id: int,
    *,
    max_seq_length: int | None = None,
    max_predictions_per_seq: int = 20,
) -> PretrainingBatch:
    """Pad masked instances into one ``PretrainingBatch``.

    Args:
        instances: B instances, each with ``masking`` set.
        pad_token_id: the id that fills positions after each sequence's end.
        max_seq_length: T; None pads to the longest instance of the batch instead.
        max_predictions_per_seq: P, the width of the Google-style ``masked_lm_*`` arrays.
    """
    if not instances:
        raise ValueError("instances is empty; a batch needs at least one instance")
    for b, instance in enumerate(instances):
        if instance.masking is None:
            raise ValueError(
                f"instances[{b}] has no masking; mask it with mask_tokens first (or let "
                "PretrainingBatches do it)"
            )
        if len(instance.masking.masked_lm_positions) > max_predictions_per_seq:
            raise ValueError(
                f"instances[{b}] has {len(instance.masking.masked_lm_positions)} MLM targets, "
                f"more than max_predictions_per_seq={max_predictions_per_seq}"
            )
    labels_given = [instance.next_sentence_label is not None for instance in instances]
    if any(labels_given) and not all(labels_given):
        raise ValueError("instances mix pair instances and single-segment ('mlm') instances")
    longest = max(len(instance.token_ids) for instance in instances)
    seq_length = longest if max_seq_length is None else max_seq_length
    if longest > seq_length:
        raise ValueError(
            f"an instance has {longest} tokens, more than max_seq_length={max_seq_length}"
        )

    batch_size = len(instances)
    input_ids = np.full((batch_size, seq_length), pad_token_id, dtype=np.int64)  # (B, T)
    token_type_ids = np.zeros((batch_size, seq_length), dtype=np.int64)  # (B, T)
    attention_mask = np.zeros((batch_size, seq_length), dtype=np.int64)  # (B, T)
    labels = np.full((batch_size, seq_length), IGNORE_INDEX, dtype=np.int64)  # (B, T)
    masked_lm_positions = np.zeros((batch_size, max_predictions_per_seq), dtype=np.int64)
    masked_lm_ids = np.zeros((batch_size, max_predictions_per_seq), dtype=np.int64)
    masked_lm_weights = np.zeros((batch_size, max_predictions_per_seq), dtype=np.float32)
    for b, instance in enumerate(instances):
        length = len(instance.token_ids)
        masking = instance.masking
        input_ids[b, :length] = masking.input_ids
        token_type_ids[b, :length] = instance.token_type_ids
        attention_mask[b, :length] = 1
        num_predictions = len(masking.masked_lm_positions)
        labels[b, list(masking.masked_lm_positions)] = masking.masked_lm_ids
        masked_lm_positions[b, :num_predictions] = masking.masked_lm_positions
        masked_lm_ids[b, :num_predictions] = masking.masked_lm_ids
        masked_lm_weights[b, :num_predictions] = 1.0
    next_sentence_label = None
    if all(labels_given):
        next_sentence_label = np.array(
            [instance.next_sentence_label for instance in instances], dtype=np.int64
        )  # (B,)
    return PretrainingBatch(
        input_ids,
        token_type_ids,
        attention_mask,
        labels,
        next_sentence_label,
        masked_lm_positions,
        masked_lm_ids,
        masked_lm_weights,
    )


class PretrainingBatches:
    """An endless, resumable stream of batches: shuffled each epoch, masked afresh if dynamic.

    Instances whose ``masking`` is None (dynamic masking) are masked when their batch is
    made; instances with fixed masks (static masking) are used as they are.

    Randomness is counter-based: epoch e's order comes from a generator seeded with
    ``(seed, 0, e)`` and the masks of batch i of epoch e from one seeded with
    ``(seed, 1, e, i)``. So the whole future of the stream is fixed by ``(seed, epoch,
    index)``; ``state_dict()`` is those integers, JSON-able, and a run resumed from it
    yields exactly the batches the uninterrupted run would have.

    Args:
        instances: from ``create_pretraining_instances``.
        tokenizer: a tokenizer or ``PretrainingVocab`` (special ids, random replacements).
        config: masking settings and ``max_seq_length``; its ``random_seed`` is the default
            seed.
        batch_size: B.
        shuffle: draw a new order each epoch; False keeps the given order.
        padding: "max_length" pads every batch to ``config.max_seq_length``; "longest" to
            the longest instance of the batch (less work, shapes vary).
        drop_last: skip an epoch's last, smaller batch.
        seed: overrides ``config.random_seed``.
    """

    def __init__(
        self,
        instances: list[PretrainingInstance],
        tokenizer,
        config: PretrainingDataConfig | None = None,
        *,
        batch_size: int = 32,
        shuffle: bool = True,
        padding: str = "max_length",
        drop_last: bool = False,
        seed: int | None = None,
    ):
        self.config = PretrainingDataConfig() if config is None else config
        if not isinstance(self.config, PretrainingDataConfig):
            raise TypeError(f"config must be a PretrainingDataConfig, got {type(config).__name__}")
        if not instances:
            raise ValueError("instances is empty; there is nothing to batch")
        batch_size = check_int("batch_size", batch_size, minimum=1)
        shuffle = check_bool("shuffle", shuffle)
        drop_last = check_bool("drop_last", drop_last)
        if padding not in ("max_length", "longest"):
            raise ValueError(f"padding must be 'max_length' or 'longest', got {padding!r}")
        if drop_last and len(instances) < batch_size:
            raise ValueError(
                f"drop_last=True with {len(instances)} instances and batch_size={batch_size} "
                "would give no batch at all"
            )
        self.seed = check_int("seed", self.config.random_seed if seed is None else seed,
                              minimum=0)
        self.instances = list(instances)
        self.vocab = as_pretraining_vocab(tokenizer)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.padding = padding
        self.drop_last = drop_last
        self.epoch = 0
        self.index = 0
        self._order_epoch: int | None = None
        self._order = np.arange(len(self.instances))

    def __len__(self) -> int:
        """Batches per epoch."""
        if self.drop_last:
            return len(self.instances) // self.batch_size
        return math.ceil(len(self.instances) / self.batch_size)

    def __iter__(self) -> PretrainingBatches:
        return self

    def __next__(self) -> PretrainingBatch:
        if self.index >= len(self):
            self.epoch += 1
            self.index = 0
        order = self._epoch_order(self.epoch)
        chosen = order[self.index * self.batch_size : (self.index + 1) * self.batch_size]
        rng = np.random.default_rng([self.seed, _MASKING_STREAM, self.epoch, self.index])
        batch = [self._masked(self.instances[k], rng) for k in chosen]
        self.index += 1
        return collate_instances(
            batch,
            self.vocab.pad_token_id,
            max_seq_length=self.config.max_seq_length if self.padding == "max_length" else None,
            max_predictions_per_seq=self.config.max_predictions_per_seq,
        )

    def _epoch_order(self, epoch: int) -> np.ndarray:
        """The instance order of ``epoch`` (cached: an epoch asks for it once per batch)."""
        if self._order_epoch != epoch:
            if self.shuffle:
                rng = np.random.default_rng([self.seed, _ORDER_STREAM, epoch])
                self._order = rng.permutation(len(self.instances))
            self._order_epoch = epoch
        return self._order

    def _masked(self, instance: PretrainingInstance, rng) -> PretrainingInstance:
        """The instance with masks: its own fixed ones, or fresh ones drawn from ``rng``."""
        if instance.masking is not None:
            return instance
        masking = mask_tokens(
            instance.token_ids,
            rng,
            self.vocab,
            masked_lm_prob=self.config.masked_lm_prob,
            max_predictions_per_seq=self.config.max_predictions_per_seq,
            do_whole_word_mask=self.config.do_whole_word_mask,
        )
        return dataclasses.replace(instance, masking=masking)

    def state_dict(self) -> dict[str, int]:
        """The position as JSON-able ints: the next batch is batch ``index`` of ``epoch``."""
        return {
            "seed": self.seed,
            "epoch": int(self.epoch),
            "index": int(self.index),
            "num_instances": len(self.instances),
            "batch_size": self.batch_size,
        }

    def load_state_dict(self, state: dict) -> None:
        """Resume from ``state_dict()``; the instances and batch size must be the same."""
        expected = ("seed", "epoch", "index", "num_instances", "batch_size")
        if not isinstance(state, dict) or sorted(state) != sorted(expected):
            raise ValueError(f"state must be a dict with keys {expected}, got {state!r:.120}")
        for key in expected:
            check_int(f"state[{key!r}]", state[key], minimum=0)
        for key, own in (("num_instances", len(self.instances)), ("batch_size", self.batch_size)):
            if state[key] != own:
                raise ValueError(
                    f"state[{key!r}] = {state[key]} does not match this iterator's {own}; "
                    "resume with the same instances and batch size"
                )
        if state["index"] > len(self):
            raise ValueError(
                f"state['index'] = {state['index']} exceeds the {len(self)} batches of an epoch"
            )
        self.seed = int(state["seed"])
        self.epoch = int(state["epoch"])
        self.index = int(state["index"])
        self._order_epoch = None
