"""ALBERT's and DistilBERT's sequence classifiers against transformers + torch autograd.

As tests/parity/test_heads_parity.py does for BERT's heads: a small minibert classifier of
distinct sizes with every parameter moved off its initial value (LayerNorm included) is
copied key for key into HF's class of the same name (the state-dict key sets must be
equal), both run one padded batch in float64, eval mode and eager attention, and the
logits, the loss, the last hidden state and every parameter's gradient are compared by
name. Then HF's state dict loads into minibert with strict=True, each library opens the
other's saved folder, and a pretraining folder becomes a classifier with a fresh head.

Dimension legend: B batch, T sequence length, E embedding size, H hidden size, C labels.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from small_models import HF_BUFFERS, perturbed, twin_of

from minibert.family.albert import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertForSequenceClassification,
)
from minibert.family.distilbert import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.parity

FLOAT64_RTOL = 1e-9
LABEL_NAMES = {"0": "ham", "1": "eggs", "2": "spam"}
# Distinct sizes on every axis: V=97, E=10, H=24, N=3 heads of D=8, I=40, C=3.
ALBERT = dict(vocab_size=97, embedding_size=10, hidden_size=24, num_attention_heads=3,
              intermediate_size=40, max_position_embeddings=32, num_hidden_layers=3,
              hidden_act="gelu_new")
ALBERT_GROUPS = dict(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2)
DISTILBERT = dict(vocab_size=97, max_position_embeddings=32, n_layers=2, n_heads=3, dim=24,
                  hidden_dim=40)


def parity_model(model, seed=0):
    """``model`` in eval mode with N(0, 0.1) noise from ``seed + 1`` on every parameter."""
    return perturbed(model, seed + 1, 0.1).eval()


def parity_albert_classifier(seed=0, **overrides):
    config = AlbertConfig(**{**ALBERT, **overrides}, id2label=LABEL_NAMES)
    return parity_model(AlbertForSequenceClassification(config, seed=seed, dtype=np.float64), seed)


def parity_distilbert_classifier(seed=0, **overrides):
    config = DistilBertConfig(**{**DISTILBERT, **overrides}, id2label=LABEL_NAMES)
    return parity_model(DistilBertForSequenceClassification(config, seed=seed, dtype=np.float64),
                     seed)


# -- ALBERT ------------------------------------------------------------------------------


@pytest.mark.parametrize("sharing", [{}, ALBERT_GROUPS], ids=["one-group", "groups-and-inner"])
def test_albert_classifier_matches_hf_float64(sharing, hf, padded_batch, to_torch,
                                              assert_twin_matches):
    model = parity_albert_classifier(**sharing)
    twin = twin_of(hf, model)
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in twin.named_parameters()]
    assert twin.config.num_labels == 3 and twin.config.id2label[2] == "spam"
    assert twin.config.problem_type is None  # HF decides: single-label for int labels
    batch = padded_batch(model.config, lengths=(11, 8, 5, 3))
    assert batch["token_type_ids"].any()  # two segments per row
    inputs = {key: batch[key] for key in ("input_ids", "token_type_ids", "attention_mask")}
    inputs["labels"] = np.array([2, 0, 1, 2])
    assert_twin_matches(model, twin, inputs, to_torch(inputs))


def test_albert_classifier_loads_hf_state_dict_strictly(hf):
    twin = twin_of(hf, parity_albert_classifier())
    state = {name: value.detach().numpy() for name, value in twin.state_dict().items()
             if not name.endswith(HF_BUFFERS)}
    model = AlbertForSequenceClassification(AlbertConfig(**ALBERT, id2label=LABEL_NAMES),
                                            seed=5, dtype=np.float64)
    model.load_state_dict(state, strict=True)
    for name, value in model.named_parameters():
        np.testing.assert_array_equal(value, state[name])


def test_albert_folders_both_ways(hf, tmp_path, padded_batch, to_torch, assert_matches):
    model = parity_albert_classifier()
    folder = model.save_pretrained(tmp_path / "ours")
    twin = hf.transformers.AlbertForSequenceClassification.from_pretrained(
        folder, attn_implementation="eager").double().eval()
    assert twin.config.id2label == {0: "ham", 1: "eggs", 2: "spam"}
    batch = padded_batch(model.config)
    inputs = {key: batch[key] for key in ("input_ids", "token_type_ids", "attention_mask")}
    with hf.torch.no_grad():
        theirs = twin(**to_torch(inputs)).logits.numpy()
    assert_matches("logits", model(**inputs).logits, theirs, FLOAT64_RTOL)
    twin.save_pretrained(tmp_path / "theirs")
    back = AlbertForSequenceClassification.from_pretrained(tmp_path / "theirs",
                                                           dtype=np.float64)
    assert back.loading_info["missing_keys"] == [] and back.id2label[1] == "eggs"
    assert_matches("logits", back(**inputs).logits, theirs, FLOAT64_RTOL)


@pytest.mark.filterwarnings("ignore:AlbertForSequenceClassification. ignored")
@pytest.mark.parametrize("pretrained", [AlbertForPreTraining, AlbertForMaskedLM])
def test_albert_pretraining_folder_of_hf_becomes_a_classifier(pretrained, hf, tmp_path):
    """HF's pretraining checkpoint: the encoder is kept, the classifier initialized."""
    config = AlbertConfig(**ALBERT)
    source = parity_model(pretrained(config, dtype=np.float64))
    twin = twin_of(hf, source)
    twin.save_pretrained(tmp_path / "pretrained")
    # An MLM folder has no pooler: HF and minibert initialize it with the classifier.
    heads = ["classifier.bias", "classifier.weight"]
    if pretrained is AlbertForMaskedLM:
        heads = ["albert.pooler"] + heads
    with pytest.warns(UserWarning, match=r"initialized from seed 3: heads " +
                      re.escape(str(sorted(heads)))):
        model = AlbertForSequenceClassification.from_pretrained(
            tmp_path / "pretrained", seed=3, num_labels=4, dtype=np.float64)
    assert model.loading_info["initialized_heads"] == sorted(heads)
    assert model.loading_info["unexpected_keys"] and all(
        key.startswith(("predictions.", "sop_classifier."))
        for key in model.loading_info["unexpected_keys"])
    assert model.num_labels == 4
    theirs = source.state_dict()
    for name, value in model.albert.named_parameters():
        if f"albert.{name}" in theirs:
            np.testing.assert_array_equal(value, theirs[f"albert.{name}"])


# -- DistilBERT --------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_distilbert_classifier_matches_hf_float64(activation, hf, padded_batch, to_torch,
                                                  assert_twin_matches):
    model = parity_distilbert_classifier(activation=activation, seq_classif_dropout=0.3)
    twin = twin_of(hf, model)
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in twin.named_parameters()]
    assert twin.config.num_labels == 3 and twin.config.id2label[0] == "ham"
    batch = padded_batch(model.config, lengths=(11, 8, 5, 3), seed=2)
    inputs = {key: batch[key] for key in ("input_ids", "attention_mask")}
    inputs["labels"] = np.array([1, 2, 0, 1])
    assert_twin_matches(model, twin, inputs, to_torch(inputs))


def test_distilbert_classifier_loads_hf_state_dict_strictly(hf):
    twin = twin_of(hf, parity_distilbert_classifier())
    state = {name: value.detach().numpy() for name, value in twin.state_dict().items()
             if not name.endswith(HF_BUFFERS)}
    model = DistilBertForSequenceClassification(
        DistilBertConfig(**DISTILBERT, id2label=LABEL_NAMES), seed=5, dtype=np.float64)
    model.load_state_dict(state, strict=True)
    for name, value in model.named_parameters():
        np.testing.assert_array_equal(value, state[name])


def test_distilbert_folders_both_ways(hf, tmp_path, padded_batch, to_torch, assert_matches):
    model = parity_distilbert_classifier()
    folder = model.save_pretrained(tmp_path / "ours")
    twin = hf.transformers.DistilBertForSequenceClassification.from_pretrained(
        folder, attn_implementation="eager").double().eval()
    assert twin.config.id2label == {0: "ham", 1: "eggs", 2: "spam"}
    batch = padded_batch(model.config)
    inputs = {key: batch[key] for key in ("input_ids", "attention_mask")}
    with hf.torch.no_grad():
        theirs = twin(**to_torch(inputs)).logits.numpy()
    assert_matches("logits", model(**inputs).logits, theirs, FLOAT64_RTOL)
    twin.save_pretrained(tmp_path / "theirs")
    back = DistilBertForSequenceClassification.from_pretrained(tmp_path / "theirs",
                                                               dtype=np.float64)
    assert back.loading_info["missing_keys"] == [] and back.id2label[2] == "spam"
    assert_matches("logits", back(**inputs).logits, theirs, FLOAT64_RTOL)


def test_distilbert_mlm_folder_of_hf_becomes_a_classifier(hf, tmp_path):
    source = parity_model(DistilBertForMaskedLM(DistilBertConfig(**DISTILBERT), dtype=np.float64))
    twin_of(hf, source).save_pretrained(tmp_path / "mlm")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DistilBertForSequenceClassification.from_pretrained(tmp_path / "mlm", seed=1,
                                                                    dtype=np.float64)
    assert model.loading_info["initialized_heads"] == [
        "classifier.bias", "classifier.weight", "pre_classifier.bias", "pre_classifier.weight"]
    assert any("initialized from seed 1" in str(w.message) for w in caught)
    assert {key.split(".")[0] for key in model.loading_info["unexpected_keys"]} == {
        "vocab_transform", "vocab_layer_norm", "vocab_projector"}
    theirs = source.state_dict()
    for name, value in model.distilbert.named_parameters():
        np.testing.assert_array_equal(value, theirs[f"distilbert.{name}"])
