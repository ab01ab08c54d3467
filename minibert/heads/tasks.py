"""Fine-tuning heads: BERT with a classifier on [CLS], on every token, or a span pointer.

The three models of Devlin et al. 2019, section 4, with HuggingFace's module names so that
``transformers`` opens their checkpoints (``bert.*``, ``classifier.*``, ``qa_outputs.*``):

- ``BertForSequenceClassification``: pooled [CLS] -> dropout -> ``classifier`` (H -> C);
- ``BertForTokenClassification``: every token's vector -> dropout -> ``classifier``;
- ``BertForQuestionAnswering``: every token's vector -> ``qa_outputs`` (H -> 2), the scores
  of "the answer starts here" and "the answer ends here".

Each head is one Linear layer on top of ``BertModel``; ``backward()`` sends the gradient of
the loss through it and into the encoder. See docs/finetuning.md.

Dimension legend: B batch, T sequence length, H hidden size, C number of labels.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from minibert.base import (
    QuestionAnsweringModelOutput,
    SequenceClassifierOutput,
    ShapeCache,
    TokenClassifierOutput,
)
from minibert.checks import IGNORE_INDEX, as_int_array, check_ids, check_int
from minibert.config import BertConfig
from minibert.heads.pretraining import BertWithHeads
from minibert.hf_config import ClassifierLabels
from minibert.io.checkpoint import load_pretrained, read_checkpoint_tensors
from minibert.layers import CrossEntropyLoss

__all__ = [
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "BertForQuestionAnswering",
    "LabelledHead",
    "PooledClassifier",
    "label_config",
]


# ----------------------------------------------------------------------------------------
# Labels in the config, as HF keeps them
# ----------------------------------------------------------------------------------------


def _check_num_labels(num_labels) -> int:
    # One label would be HF's regression, which minibert does not implement.
    return check_int("num_labels", num_labels, minimum=2)


def label_config(config: BertConfig, num_labels=None, id2label=None) -> BertConfig:
    """A copy of ``config`` labelled for a classifier, its labels written as HF writes them.

    ``config`` is a BertConfig, AlbertConfig or DistilBertConfig (the copy is of its class).

    The labels come from ``num_labels``, else ``id2label``, else the config's own (see
    ``BertConfig``: a ``num_labels`` that matches the config's count keeps its names; other
    labels are named ``LABEL_0``, ``LABEL_1``...), else the default two. Unlike the config,
    a classifier needs at least two labels.
    """
    if not isinstance(config, ClassifierLabels):
        raise TypeError(f"config must be a BertConfig, AlbertConfig or DistilBertConfig, "
                        f"got {type(config).__name__}")
    if num_labels is not None:
        _check_num_labels(num_labels)
    labelled = dataclasses.replace(config, num_labels=num_labels, id2label=id2label)
    _check_num_labels(labelled.num_labels)
    labelled.id2label = labelled.id2label  # written out even when they are the default two
    return labelled


def _checkpoint_head_rows(directory, key: str) -> int | None:
    """Rows of a head weight in a checkpoint folder (memory-mapped, no copy), or None."""
    tensors = read_checkpoint_tensors(directory, mmap=True)
    return int(tensors[key].shape[0]) if key in tensors else None


class LabelledHead(BertWithHeads):
    """Shared by the classifiers: labels in the config, the num_labels check on load."""

    config: BertConfig

    @property
    def num_labels(self) -> int:
        return self.config.num_labels

    @property
    def id2label(self) -> dict[int, str]:
        return self.config.id2label

    @classmethod
    def from_pretrained(cls, directory, dtype=np.float32, seed: int = 0, num_labels=None,
                        **kwargs):
        """Load a checkpoint folder; a classifier head it lacks is initialized from ``seed``.

        ``num_labels`` that disagrees with the checkpoint's ``classifier.weight`` raises
        ValueError (a head trained for other labels cannot be reused; load the encoder
        from a folder without that head, or ask for its number of labels).
        """
        if num_labels is not None:
            num_labels = _check_num_labels(num_labels)
            rows = _checkpoint_head_rows(directory, "classifier.weight")
            if rows is not None and rows != num_labels:
                raise ValueError(
                    f"num_labels={num_labels} disagrees with the checkpoint "
                    f"{str(directory)!r}, whose classifier.weight has {rows} rows "
                    f"({rows} labels); pass num_labels={rows} or start from a checkpoint "
                    f"without a classifier head")
        return load_pretrained(cls, directory, dtype=dtype, seed=seed, num_labels=num_labels,
                               **kwargs)

    def _classifier_dropout(self) -> float:
        p = self.config.extra.get("classifier_dropout")
        return self.config.hidden_dropout_prob if p is None else p

    def _build_classifier(self, config: BertConfig, seed: int, dtype, num_labels, id2label,
                          add_pooling_layer: bool) -> None:
        """``bert``, then dropout and the ``classifier`` (H -> C) on top."""
        config = label_config(config, num_labels, id2label)
        init = self._build_bert(config, seed, dtype, add_pooling_layer)
        self.dropout = init.dropout(self._classifier_dropout())
        self.classifier = init.linear(config.hidden_size, self.num_labels)
        self.loss_fct = CrossEntropyLoss()

    def _classifier_loss(self, logits: np.ndarray, labels, ignore: int | None):
        """Mean cross-entropy of logits (..., C) against labels (...), by ``self.loss_fct``."""
        labels = as_int_array("labels", labels)
        if labels.shape != logits.shape[:-1]:
            expected = "shape (B,) =" if logits.ndim == 2 else "the shape of input_ids"
            raise ValueError(f"labels must have {expected} {logits.shape[:-1]}, "
                             f"got {labels.shape}")
        check_ids("labels", labels, self.num_labels, "num_labels", ignore=ignore)
        loss = self.loss_fct(logits, labels)
        self.cache = ShapeCache(logits.shape)  # a loss to differentiate: backward may run
        return float(loss)

    def _first_token_classifier_output(self, logits: np.ndarray, labels, base
                                       ) -> SequenceClassifierOutput:
        """The output of a classifier on the first ([CLS]) hidden state (ELECTRA's,
        DistilBERT's): logits (B, C), the loss given labels (B,), then the cache keeps
        the (B, T, H) shape the backward puts d[CLS] into."""
        loss = None
        if labels is not None:
            loss = self._classifier_loss(logits, labels, ignore=None)
            self.cache = ShapeCache(base.last_hidden_state.shape)  # (B, T, H)
        return SequenceClassifierOutput(loss, logits, base.hidden_states, base.attentions)


# ----------------------------------------------------------------------------------------
# Sequence classification
# ----------------------------------------------------------------------------------------


class PooledClassifier(LabelledHead):
    """A linear classifier on the pooled [CLS] vector: dropout, ``classifier`` (H -> C).

    The forward and backward of BERT's and ALBERT's sequence classifiers; the encoder is
    the attribute named by the class's ``base_model_prefix`` ("bert" or "albert").
    """

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> SequenceClassifierOutput:
        """input_ids etc. int (B, T); labels int (B,) in [0, C) -> logits (B, C), loss."""
        base = self._encode(input_ids, token_type_ids, attention_mask, output_attentions,
                            output_hidden_states)
        logits = self.classifier(self.dropout(base.pooler_output))  # (B, C)
        loss = None if labels is None else self._classifier_loss(logits, labels, ignore=None)
        return SequenceClassifierOutput(loss, logits, base.hidden_states, base.attentions)

    def backward(self) -> None:
        """Add d loss / d parameter into every gradient buffer."""
        self._pop_cache()
        d_logits = self.loss_fct.backward(1.0)  # (B, C)
        # forward: logits = classifier(dropout(pooled))
        d_pooled = self.dropout.backward(self.classifier.backward(d_logits))  # (B, H)
        self._encoder().backward(None, d_pooled)


class BertForSequenceClassification(PooledClassifier):
    """BERT + a linear classifier on the pooled [CLS] vector; loss = mean cross-entropy.

    Works on single sentences and on pairs (give ``token_type_ids``). ``num_labels`` comes
    from the argument, else ``id2label``, else the config (see ``label_config``); the
    label names are kept in the config (``config.id2label``), so ``save_pretrained`` writes
    them into config.json as HF does.
    """

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32, num_labels=None,
                 id2label=None) -> None:
        super().__init__()
        self._build_classifier(config, seed, dtype, num_labels, id2label,
                               add_pooling_layer=True)


# ----------------------------------------------------------------------------------------
# Token classification
# ----------------------------------------------------------------------------------------


class BertForTokenClassification(LabelledHead):
    """BERT (no pooler, as HF) + a linear classifier on every token; e.g. BIO entity tags.

    ``labels`` (B, T) hold -100 (``IGNORE_INDEX``) where there is no target: [CLS], [SEP],
    padding, and the ``##`` continuation pieces of a word (the first piece carries the
    word's label). The loss is the mean cross-entropy over the other positions.
    """

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32, num_labels=None,
                 id2label=None) -> None:
        super().__init__()
        self._build_classifier(config, seed, dtype, num_labels, id2label,
                               add_pooling_layer=False)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> TokenClassifierOutput:
        """input_ids etc. int (B, T); labels int (B, T) in [0, C) or -100 -> logits (B, T, C)."""
        base = self._encode(input_ids, token_type_ids, attention_mask, output_attentions,
                            output_hidden_states)
        logits = self.classifier(self.dropout(base.last_hidden_state))  # (B, T, C)
        loss = None
        if labels is not None:
            loss = self._classifier_loss(logits, labels, ignore=IGNORE_INDEX)
        return TokenClassifierOutput(loss, logits, base.hidden_states, base.attentions)

    def backward(self) -> None:
        """Add d loss / d parameter into every gradient buffer."""
        self._pop_cache()
        d_logits = self.loss_fct.backward(1.0)  # (B, T, C)
        # forward: logits = classifier(dropout(last_hidden_state))
        d_sequence = self.dropout.backward(self.classifier.backward(d_logits))  # (B, T, H)
        self.bert.backward(d_sequence)


# ----------------------------------------------------------------------------------------
# Extractive question answering
# ----------------------------------------------------------------------------------------


class BertForQuestionAnswering(BertWithHeads):
    """BERT (no pooler) + ``qa_outputs`` (H -> 2): start and end scores of the answer span.

    The input is ``[CLS] question [SEP] context [SEP]``. With ``start_positions`` and
    ``end_positions`` (B,) the loss is (CE(start) + CE(end)) / 2, each a cross-entropy
    over the T positions. An unanswerable question points both at [CLS] (position 0), as
    in SQuAD 2.0. A position equal to T is ignored, as HF ignores the value its clamp gives
    any position past the end; other positions outside [0, T) raise ValueError instead of
    being clamped silently. Span decoding is ``minibert.training.metrics.decode_spans``.
    """

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self._build_bert(config, seed, dtype, add_pooling_layer=False)
        self.qa_outputs = init.linear(config.hidden_size, 2)
        self.start_loss = CrossEntropyLoss()
        self.end_loss = CrossEntropyLoss()

    def _check_positions(self, start_positions, end_positions, batch: int, seq_len: int):
        starts = as_int_array("start_positions", start_positions)
        ends = as_int_array("end_positions", end_positions)
        for name, positions in (("start_positions", starts), ("end_positions", ends)):
            if positions.shape != (batch,):
                raise ValueError(f"{name} must have shape (B,) = ({batch},), "
                                 f"got {positions.shape}")
            outside = (positions < 0) | (positions > seq_len)
            if outside.any():
                raise ValueError(f"{name} contains {positions[outside][0]}; allowed: token "
                                 f"positions [0, {seq_len}) of the sequence, or {seq_len} "
                                 f"(= T, ignored as in HF)")
        both = (starts < seq_len) & (ends < seq_len)
        reversed_span = both & (starts > ends)
        if reversed_span.any():
            row = int(np.nonzero(reversed_span)[0][0])
            raise ValueError(f"start_positions[{row}]={starts[row]} is after "
                             f"end_positions[{row}]={ends[row]}; a span needs start <= end")
        return starts, ends

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, start_positions=None,
                end_positions=None, output_attentions: bool = False,
                output_hidden_states: bool = False) -> QuestionAnsweringModelOutput:
        """input_ids etc. int (B, T); start/end_positions int (B,) -> start/end logits (B, T)."""
        self.cache = None
        if (start_positions is None) != (end_positions is None):
            raise ValueError("start_positions and end_positions must be given together, got "
                             f"only {'start' if end_positions is None else 'end'}_positions")
        base = self.bert(input_ids, token_type_ids, attention_mask, output_attentions,
                         output_hidden_states)
        logits = self.qa_outputs(base.last_hidden_state)  # (B, T, 2)
        start_logits, end_logits = logits[..., 0], logits[..., 1]  # (B, T) each
        loss = None
        if start_positions is not None:
            batch, seq_len = start_logits.shape
            starts, ends = self._check_positions(start_positions, end_positions, batch, seq_len)
            start_loss = self.start_loss(start_logits, starts, ignore_index=seq_len)
            end_loss = self.end_loss(end_logits, ends, ignore_index=seq_len)
            loss = float((start_loss + end_loss) / 2)
            self.cache = ShapeCache(logits.shape)  # a loss to differentiate: backward may run
        return QuestionAnsweringModelOutput(loss, start_logits, end_logits, base.hidden_states,
                                            base.attentions)

    def backward(self) -> None:
        """Add d loss / d parameter into every gradient buffer."""
        self._pop_cache("start_positions and end_positions")
        # forward: loss = (start_loss + end_loss) / 2
        d_start = self.start_loss.backward(0.5)  # (B, T)
        d_end = self.end_loss.backward(0.5)  # (B, T)
        d_logits = np.stack([d_start, d_end], axis=-1)  # (B, T, 2)
        self.bert.backward(self.qa_outputs.backward(d_logits))
