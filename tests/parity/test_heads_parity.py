"""The fine-tuning heads against HuggingFace transformers + torch autograd, tensor by tensor.

For each head (sequence classification, token classification, question answering) a
small minibert model with perturbed weights is copied into the HF model of the same class
(the state-dict key sets must be equal), both run the same padded batch in float64, eval
mode and eager attention, and then the logits, the loss and every parameter's gradient
are compared by name. Agreement is ~1e-15; the 1e-9 bound leaves room for rounding only.

Dimension legend: B batch, T sequence length, C number of labels.
"""

from __future__ import annotations

import numpy as np
import pytest

from minibert.checks import IGNORE_INDEX
from minibert.heads import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.parity

FLOAT64_RTOL = 1e-9
LABEL_NAMES = {"0": "ham", "1": "eggs", "2": "spam"}


def inputs_of(batch: dict) -> dict:
    return {key: batch[key] for key in ("input_ids", "token_type_ids", "attention_mask")}


def test_sequence_classification_matches_hf(make_model, hf_twin, padded_batch, to_torch,
                                            assert_twin_matches):
    model = make_model(BertForSequenceClassification, extra={"id2label": LABEL_NAMES})
    twin = hf_twin(model)
    assert twin.config.num_labels == 3 and twin.config.id2label[2] == "spam"
    assert [name for name, _ in model.named_parameters()] == \
        [name for name, _ in twin.named_parameters()]
    batch = inputs_of(padded_batch(model.config))
    labels = np.array([2, 0, 1])
    assert_twin_matches(model, twin, {**batch, "labels": labels},
                        to_torch({**batch, "labels": labels}), ["logits"])


def test_sentence_pair_classification_matches_hf(make_model, hf_twin, padded_batch,
                                                 to_torch, assert_twin_matches):
    model = make_model(BertForSequenceClassification, extra={"num_labels": 4}, seed=2)
    twin = hf_twin(model)
    batch = inputs_of(padded_batch(model.config, lengths=(12, 12, 7, 3), seed=4))
    assert batch["token_type_ids"].any()  # two segments per row
    labels = np.array([3, 1, 0, 3])
    assert_twin_matches(model, twin, {**batch, "labels": labels},
                        to_torch({**batch, "labels": labels}), ["logits"])


def test_token_classification_matches_hf(make_model, hf_twin, padded_batch, to_torch,
                                         assert_twin_matches):
    model = make_model(BertForTokenClassification, extra={"num_labels": 5})
    twin = hf_twin(model)
    assert "bert.pooler.dense.weight" not in model.state_dict()
    batch = inputs_of(padded_batch(model.config))
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, batch["input_ids"].shape)
    labels[batch["attention_mask"] == 0] = IGNORE_INDEX  # padding
    labels[:, 0] = IGNORE_INDEX  # [CLS]
    labels[:, 3] = IGNORE_INDEX  # a "##" piece
    assert_twin_matches(model, twin, {**batch, "labels": labels},
                        to_torch({**batch, "labels": labels}), ["logits"])


def test_question_answering_matches_hf(make_model, hf_twin, padded_batch, to_torch,
                                       assert_twin_matches):
    model = make_model(BertForQuestionAnswering)
    twin = hf_twin(model)
    batch = inputs_of(padded_batch(model.config, lengths=(11, 9, 6, 5)))
    seq_len = batch["input_ids"].shape[1]
    # An answer, a no-answer ([CLS]), a one-token answer, and a start at T (HF's clamp
    # value, ignored by both).
    starts = np.array([6, 0, 4, seq_len])
    ends = np.array([8, 0, 4, 2])
    assert_twin_matches(model, twin, {**batch, "start_positions": starts, "end_positions": ends},
                        to_torch({**batch, "start_positions": starts, "end_positions": ends}),
                        ["start_logits", "end_logits"])


def test_hf_reads_a_saved_classifier_folder(make_model, hf, tmp_path, padded_batch,
                                            to_torch, assert_matches):
    model = make_model(BertForSequenceClassification, extra={"id2label": LABEL_NAMES})
    folder = model.save_pretrained(tmp_path / "clf")
    twin = hf.transformers.BertForSequenceClassification.from_pretrained(
        folder, attn_implementation="eager").double().eval()
    assert twin.config.id2label == {0: "ham", 1: "eggs", 2: "spam"}
    batch = inputs_of(padded_batch(model.config))
    with hf.torch.no_grad():
        theirs = twin(**to_torch(batch)).logits.numpy()
    assert_matches("logits", model(**batch).logits, theirs, FLOAT64_RTOL)
