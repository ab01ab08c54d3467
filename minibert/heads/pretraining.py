"""BERT's pretraining heads and the models that carry them: MLM, NSP, or both.

- ``BertPreTrainingHeads`` (``cls.predictions`` + ``cls.seq_relationship``) on top of
  ``BertModel`` make ``BertForPreTraining``; the MLM head alone makes ``BertForMaskedLM``,
  the NSP head alone ``BertForNextSentencePrediction`` (HF's names and module tree);
- ``BertWithHeads`` is what they share, and what the fine-tuning heads (``heads.tasks``)
  and ALBERT's models build on: the encoder, the masked-LM and next-sentence losses.

The MLM decoder reads only the labelled positions: the (M, H) vectors go through the
decoder, not all B*T of them (HF computes the full (B, T, V) logits; here they are
computed only when ``prediction_logits`` is read).

Dimension legend: B batch, T sequence length, H hidden size, V vocabulary size,
M number of labelled (masked) positions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.base import (
    BertForPreTrainingOutput,
    Initializer,
    LazyLogits,
    MaskedLMOutput,
    NextSentencePredictorOutput,
    PretrainedModel,
    ShapeCache,
    preserved_caches,
)
from minibert.checks import IGNORE_INDEX, as_int_array, check_ids, check_real
from minibert.config import BertConfig
from minibert.layers import CrossEntropyLoss, Embedding, Module, TiedLinear, get_activation
from minibert.model import BertModel

__all__ = [
    "BertPredictionHeadTransform",
    "BertLMPredictionHead",
    "BertPreTrainingHeads",
    "BertOnlyMLMHead",
    "BertOnlyNSPHead",
    "BertWithHeads",
    "BertForPreTraining",
    "MaskedLMModel",
    "BertForMaskedLM",
    "BertForNextSentencePrediction",
    "MaskedLMCache",
    "masked_positions",
    "masked_lm_forward",
    "masked_lm_backward",
    "PreTrainingCache",
    "PreTrainingLosses",
    "pretraining_losses",
    "pretraining_backward",
    "MLM_DECODER_ALIASES",
]


class BertPredictionHeadTransform(Module):
    """dense H -> H, activation, LayerNorm: applied before the vocabulary projection."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        self.dense = init.linear(init.config.hidden_size, init.config.hidden_size)
        self.transform_act_fn = get_activation(init.config.hidden_act)
        self.LayerNorm = init.layer_norm()

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return self.dense.backward(self.transform_act_fn.backward(self.LayerNorm.backward(dout)))


class BertLMPredictionHead(Module):
    """Transform, then logits = x @ word_embeddings.T + bias (the decoder weight is tied).

    The word-embedding array is not registered here (it belongs to the embeddings and is
    listed once); its gradient from this use is added into the same buffer as the
    embedding's own gradient.
    """

    def __init__(self, init: Initializer, word_embeddings: Embedding) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(init)
        self.add_parameter("bias", np.zeros(init.config.vocab_size, dtype=init.dtype))
        if getattr(init.config, "tie_word_embeddings", True):
            self.decoder = TiedLinear(word_embeddings)
        else:  # config.json "tie_word_embeddings": false: the decoder has its own table
            table = init.embedding(init.config.vocab_size)
            self.decoder = TiedLinear(table)
            # listed (and saved) here, as HF does: cls.predictions.decoder.weight
            self.decoder.params["weight"] = table.params["weight"]
            self.decoder.grads["weight"] = table.grads["weight"]

    @property
    def word_embeddings(self) -> Embedding:
        """The word-embedding module whose table the decoder reads (tied, not a child)."""
        return self.decoder.embedding

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> logits (..., V)."""
        transformed = self.transform(hidden_states)
        return self.decoder(transformed, self.params["bias"])

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_transformed, d_bias = self.decoder.backward(dout)  # adds into the word table
        self.grads["bias"] += d_bias
        return self.transform.backward(d_transformed)

    def predict(self, hidden_states: np.ndarray) -> np.ndarray:
        """Logits without touching the caches a pending backward needs."""
        with preserved_caches(self):
            return self.forward(hidden_states)


class BertOnlyMLMHead(Module):
    """``cls.predictions`` alone (BertForMaskedLM)."""

    def __init__(self, init: Initializer, word_embeddings: Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(init, word_embeddings)


class BertOnlyNSPHead(Module):
    """``cls.seq_relationship`` alone (BertForNextSentencePrediction)."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        self.seq_relationship = init.linear(init.config.hidden_size, 2)


class BertPreTrainingHeads(Module):
    """``cls.predictions`` (MLM) and ``cls.seq_relationship`` (NSP, 2 classes)."""

    def __init__(self, init: Initializer, word_embeddings: Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(init, word_embeddings)
        self.seq_relationship = init.linear(init.config.hidden_size, 2)


# ----------------------------------------------------------------------------------------
# Pretraining models
# ----------------------------------------------------------------------------------------


class MaskedLMCache(NamedTuple):
    positions: tuple  # (batch index, position) arrays of the M labelled positions
    sequence_shape: tuple  # (B, T, H)
    cross_entropy: F.CrossEntropyCache  # of the (M, V) logits against the M labels


class PreTrainingCache(NamedTuple):
    mlm: MaskedLMCache | None  # None when the forward had no MLM labels
    pair: bool  # whether it had sentence-pair labels, NSP or SOP (the loss layer keeps its cache)


class PreTrainingLosses(NamedTuple):
    """What the two pretraining losses gave (``pretraining_losses``)."""

    loss: float | None  # the sum of the parts that had labels; None without any
    masked_lm_loss: float | None
    pair_loss: float | None  # next-sentence or sentence-order prediction
    masked_lm_logits: np.ndarray | None  # (M, V)
    masked_lm_positions: tuple | None
    cache: PreTrainingCache | None  # what pretraining_backward needs; None without labels

    def output_fields(self) -> dict:
        """The fields of a pretraining output (BertForPreTrainingOutput and its ALBERT twin)."""
        return dict(loss=self.loss, masked_lm_loss=self.masked_lm_loss,
                    next_sentence_loss=self.pair_loss, masked_lm_logits=self.masked_lm_logits,
                    masked_lm_positions=self.masked_lm_positions)


def sentence_pair_labels(name: str, label, batch: int, meaning: str) -> np.ndarray:
    """The labels of a sentence-pair task (NSP, SOP), int (B,) in {0, 1}, checked where they
    enter; ``meaning`` says what 0 and 1 stand for."""
    label = as_int_array(name, label)
    if label.shape != (batch,):
        raise ValueError(f"{name} must have shape (B,) = ({batch},), got {label.shape}")
    check_ids(name, label, 2, meaning)
    return label


def pretraining_losses(sequence_output, pair_logits, labels, pair_label, predictions, pair_loss,
                       vocab_size: int, pair_name: str, pair_meaning: str) -> PreTrainingLosses:
    """The masked-LM loss of ``predictions`` at the M labelled positions of ``labels`` and
    the sentence-pair loss (``pair_loss`` of ``pair_logits`` (B, 2) against ``pair_label``,
    checked as ``pair_name``), each where its labels are given. BERT's (NSP) and ALBERT's
    (SOP) pretraining models run this; ``pretraining_backward`` is its backward."""
    pair = None
    if pair_label is not None:
        pair_label = sentence_pair_labels(pair_name, pair_label, len(pair_logits), pair_meaning)
        pair = float(pair_loss(pair_logits, pair_label))
    mlm_loss = masked_logits = mlm_cache = None
    if labels is not None:  # only the M labelled positions go through the decoder
        mlm_loss, masked_logits, mlm_cache = masked_lm_forward(sequence_output, labels,
                                                               predictions, vocab_size)
    parts = [part for part in (mlm_loss, pair) if part is not None]
    return PreTrainingLosses(float(sum(parts)) if parts else None, mlm_loss, pair, masked_logits,
                             None if mlm_cache is None else mlm_cache.positions,
                             PreTrainingCache(mlm_cache, pair is not None) if parts else None)


def pretraining_backward(cache: PreTrainingCache | None, mlm_weight, pair_weight, predictions,
                         pair_classifier, pair_loss, pair_name: str, pair_weight_name: str):
    """The gradients (d sequence_output (B, T, H), d pooled_output (B, H)) of
    ``mlm_weight * masked_lm_loss + pair_weight * pair_loss``; either is None when its part
    had no labels. The weights are checked (``pair_weight`` as ``pair_weight_name``) and a
    forward with labels asked for before anything runs."""
    mlm_weight = check_real("mlm_weight", mlm_weight)
    pair_weight = check_real(pair_weight_name, pair_weight)
    if cache is None:
        raise RuntimeError(f"backward() needs a forward pass with labels and/or {pair_name} "
                           "first")
    d_sequence = d_pooled = None
    if cache.mlm is not None:
        d_sequence = masked_lm_backward(mlm_weight, cache.mlm, predictions.backward)
    if cache.pair:
        # forward: pair_loss = cross_entropy(pair_classifier(pooled))
        d_pooled = pair_classifier.backward(pair_loss.backward(pair_weight))
    return d_sequence, d_pooled


def masked_positions(labels, shape: tuple, vocab_size: int):
    """MLM labels int (B, T), checked where they enter -> (labels, the (batch index,
    position) arrays of the M positions with a target, i.e. a label other than -100)."""
    labels = as_int_array("labels", labels)
    if labels.ndim == 1 and shape[0] == 1:  # one sequence, as input_ids may be given
        labels = labels[None]
    if labels.shape != shape:
        raise ValueError(f"labels must have the shape of input_ids {shape}, got {labels.shape}")
    check_ids("labels", labels, vocab_size, "the vocabulary size", ignore=IGNORE_INDEX)
    return labels, np.nonzero(labels != IGNORE_INDEX)


def masked_lm_forward(sequence_output: np.ndarray, labels, head, vocab_size: int):
    """The masked-LM loss of every pretraining model: gather the labelled positions, run
    the head on them only, cross-entropy against their labels.

    sequence_output (B, T, H); labels int (B, T), -100 where no target; head, a module
    (M, H) -> logits (M, V) that keeps its own cache. Returns (loss, logits (M, V),
    MaskedLMCache).
    """
    labels, positions = masked_positions(labels, sequence_output.shape[:2], vocab_size)
    logits = head(sequence_output[positions])  # (M, V)
    loss, cross_entropy = F.cross_entropy_forward(logits, labels[positions])
    return float(loss), logits, MaskedLMCache(positions, sequence_output.shape, cross_entropy)


def masked_lm_backward(dloss: float, cache: MaskedLMCache, head_backward) -> np.ndarray:
    """d loss -> d sequence_output (B, T, H), nonzero at the labelled positions only;
    ``head_backward`` is the head's backward, d logits (M, V) -> d rows (M, H)."""
    # forward: loss = cross_entropy(logits, labels[positions])
    d_logits = F.cross_entropy_backward(dloss, cache.cross_entropy)  # (M, V)
    # forward: logits = head(sequence_output[positions])
    d_rows = head_backward(d_logits)  # (M, H)
    d_sequence = np.zeros(cache.sequence_shape, dtype=d_rows.dtype)  # (B, T, H)
    d_sequence[cache.positions] = d_rows  # each position appears once
    return d_sequence


class BertWithHeads(PretrainedModel, Module):
    """Shared plumbing of the fine-tuning heads (``heads.tasks``) and ALBERT's models.

    BERT's pretraining models below are written out instead, to be read top to bottom.
    Its ``cache`` holds what the loss backward needs; None means the last forward computed
    no loss.
    """

    config: BertConfig
    config_class = BertConfig

    def _build_bert(self, config: BertConfig, seed: int, dtype,
                    add_pooling_layer: bool = True) -> Initializer:
        """Set ``config`` and ``bert``; returns the initializer for the heads."""
        init = self.adopt_config(config, seed, dtype)
        self.bert = BertModel(config, add_pooling_layer=add_pooling_layer, _init=init)
        return init

    def _encoder(self) -> Module:
        """The encoder: the attribute named by ``base_model_prefix`` ("bert", "albert", ...)."""
        return getattr(self, self.base_model_prefix)

    def _encode(self, *inputs):
        """Forget the last forward's loss cache, then run the encoder on ``inputs``."""
        self.cache = None
        return self._encoder()(*inputs)

    def _pop_cache(self, needs: str = "labels"):
        """The loss cache of the last forward, cleared (one backward per forward)."""
        if self.cache is None:
            raise RuntimeError(f"backward() needs a forward pass with {needs} first")
        cache, self.cache = self.cache, None
        return cache

    def _masked_lm_output(self, predictions: BertLMPredictionHead, base, labels
                          ) -> MaskedLMOutput:
        """The output of an MLM-only model: the loss and logits at the labelled positions
        when ``labels`` are given (their cache is the model's); all logits on demand."""
        sequence_output = base.last_hidden_state  # (B, T, H)
        loss = masked_logits = positions = None
        if labels is not None:
            loss, masked_logits, self.cache = masked_lm_forward(
                sequence_output, labels, predictions, self.config.vocab_size)
            positions = self.cache.positions
        return MaskedLMOutput(loss, base.hidden_states, base.attentions, masked_logits,
                              positions, LazyLogits(lambda: predictions.predict(sequence_output)))

    def _masked_lm_backward(self, predictions: BertLMPredictionHead,
                            mlm_weight: float) -> np.ndarray:
        """d sequence_output (B, T, H) of ``mlm_weight * loss`` of an MLM-only model."""
        mlm_weight = check_real("mlm_weight", mlm_weight)
        return masked_lm_backward(mlm_weight, self._pop_cache(), predictions.backward)


# HF also lists the MLM decoder under these keys: the tied word embeddings and the head's bias.
MLM_DECODER_ALIASES = {
    "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}


def mlm_decoder_aliases(config) -> dict[str, str]:
    """MLM_DECODER_ALIASES, without the decoder weight when it is untied (its own array)."""
    aliases = dict(MLM_DECODER_ALIASES)
    if not getattr(config, "tie_word_embeddings", True):
        del aliases["cls.predictions.decoder.weight"]
    return aliases


NSP_MEANING = "0 = B follows A, 1 = B is random"


class BertForPreTraining(PretrainedModel, Module):
    """BERT with both pretraining heads; loss = MLM cross-entropy + NSP cross-entropy.

    The MLM loss is the mean over positions whose label is not -100. Unlike HF (which
    returns ``loss=None`` unless both label arrays are given), the loss is the sum of
    whichever parts have labels, so the same model trains MLM-only.
    """

    config_class = BertConfig

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype)
        self.bert = BertModel(config, _init=init)
        self.cls = BertPreTrainingHeads(init, self.bert.embeddings.word_embeddings)
        self.nsp_loss = CrossEntropyLoss()

    def _tied_aliases(self) -> dict[str, str]:
        return mlm_decoder_aliases(self.config)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                next_sentence_label=None, output_attentions: bool = False,
                output_hidden_states: bool = False) -> BertForPreTrainingOutput:
        """input_ids etc. int (B, T); labels int (B, T) with -100 where no target;
        next_sentence_label int (B,), 0 = B follows A, 1 = B is random."""
        self.cache = None  # what the backward needs; stays None without any label
        bert = self.bert(input_ids, token_type_ids, attention_mask, output_attentions,
                         output_hidden_states)
        sequence_output = bert.last_hidden_state  # (B, T, H)
        # next-sentence prediction: two logits from the pooled [CLS] vector
        nsp_logits = self.cls.seq_relationship(bert.pooler_output)  # (B, 2)
        # the masked LM on the labelled positions, plus NSP where its labels are given
        losses = pretraining_losses(sequence_output, nsp_logits, labels, next_sentence_label,
                                    self.cls.predictions, self.nsp_loss, self.config.vocab_size,
                                    "next_sentence_label", NSP_MEANING)
        self.cache = losses.cache
        return BertForPreTrainingOutput(
            seq_relationship_logits=nsp_logits, hidden_states=bert.hidden_states,
            attentions=bert.attentions, **losses.output_fields(),
            _prediction_logits=LazyLogits(lambda: self.cls.predictions.predict(sequence_output)))

    def backward(self, mlm_weight: float = 1.0, nsp_weight: float = 1.0) -> None:
        """Add d loss / d parameter into every gradient buffer (call zero_grad() between steps).

        The loss differentiated is ``mlm_weight * masked_lm_loss + nsp_weight *
        next_sentence_loss``: 1 and 1 give the forward's ``loss``. Other weights let a part
        of a batch contribute its share of the whole batch's mean (data parallelism and
        gradient accumulation, see minibert.training.parallel).
        """
        d_sequence, d_pooled = pretraining_backward(
            self.cache, mlm_weight, nsp_weight, self.cls.predictions, self.cls.seq_relationship,
            self.nsp_loss, "next_sentence_label", "nsp_weight")
        self.cache = None  # one backward per forward
        self.bert.backward(d_sequence, d_pooled)  # (B, T, H) and (B, H), either may be None


class MaskedLMModel(BertWithHeads):
    """An encoder (no pooler, as HF) with the MLM head alone; loss = MLM cross-entropy.

    The base of ALBERT's ``AlbertForMaskedLM``: a subclass builds its encoder and head and
    names the head in its ``mlm_predictions`` property.
    """

    mlm_predictions: BertLMPredictionHead

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> MaskedLMOutput:
        """input_ids etc. int (B, T); labels int (B, T) with -100 where no target."""
        base = self._encode(input_ids, token_type_ids, attention_mask, output_attentions,
                            output_hidden_states)
        return self._masked_lm_output(self.mlm_predictions, base, labels)

    def backward(self, mlm_weight: float = 1.0) -> None:
        """Add the gradient of ``mlm_weight * loss`` into every gradient buffer."""
        self._encoder().backward(self._masked_lm_backward(self.mlm_predictions, mlm_weight))


class BertForMaskedLM(PretrainedModel, Module):
    """BERT (no pooler, as HF) with the MLM head only; loss = MLM cross-entropy."""

    config_class = BertConfig

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype)
        self.bert = BertModel(config, add_pooling_layer=False, _init=init)
        self.cls = BertOnlyMLMHead(init, self.bert.embeddings.word_embeddings)

    def _tied_aliases(self) -> dict[str, str]:
        return mlm_decoder_aliases(self.config)

    @property
    def mlm_predictions(self) -> BertLMPredictionHead:
        return self.cls.predictions

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> MaskedLMOutput:
        """input_ids etc. int (B, T); labels int (B, T) with -100 where no target."""
        self.cache = None
        bert = self.bert(input_ids, token_type_ids, attention_mask, output_attentions,
                         output_hidden_states)
        sequence_output = bert.last_hidden_state  # (B, T, H)
        loss = masked_logits = positions = None
        if labels is not None:  # only the M labelled positions go through the decoder
            loss, masked_logits, self.cache = masked_lm_forward(
                sequence_output, labels, self.cls.predictions, self.config.vocab_size)
            positions = self.cache.positions
        return MaskedLMOutput(loss, bert.hidden_states, bert.attentions, masked_logits, positions,
                              LazyLogits(lambda: self.cls.predictions.predict(sequence_output)))

    def backward(self, mlm_weight: float = 1.0) -> None:
        """Add the gradient of ``mlm_weight * loss`` into every gradient buffer."""
        mlm_weight = check_real("mlm_weight", mlm_weight)
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass with labels first")
        cache, self.cache = self.cache, None  # one backward per forward
        self.bert.backward(masked_lm_backward(mlm_weight, cache, self.cls.predictions.backward))


class BertForNextSentencePrediction(PretrainedModel, Module):
    """BERT with the NSP head only (logits from the pooled [CLS])."""

    config_class = BertConfig

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype)
        self.bert = BertModel(config, _init=init)
        self.cls = BertOnlyNSPHead(init)
        self.nsp_loss = CrossEntropyLoss()

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> NextSentencePredictorOutput:
        """labels int (B,): 0 = B follows A, 1 = B is random."""
        self.cache = None
        bert = self.bert(input_ids, token_type_ids, attention_mask, output_attentions,
                         output_hidden_states)
        logits = self.cls.seq_relationship(bert.pooler_output)  # (B, 2)
        loss = None
        if labels is not None:
            labels = sentence_pair_labels("labels", labels, len(logits), NSP_MEANING)
            loss = float(self.nsp_loss(logits, labels))
            self.cache = ShapeCache(logits.shape)
        return NextSentencePredictorOutput(loss, logits, bert.hidden_states, bert.attentions)

    def backward(self) -> None:
        """Add the gradient of the NSP loss into every gradient buffer."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass with labels first")
        self.cache = None  # one backward per forward
        # forward: loss = cross_entropy(seq_relationship(pooled))
        self.bert.backward(None, self.cls.seq_relationship.backward(self.nsp_loss.backward(1.0)))
