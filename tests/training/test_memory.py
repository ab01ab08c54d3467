"""Training-memory accounting (minibert.training.memory) against the models themselves."""

from __future__ import annotations

import numpy as np
import pytest
from small_models import small_config

import minibert as mb
from minibert.io.checkpoint import checkpoint_summary
from minibert.training import memory as M

# The small config with every size distinct (no count can match another by chance).
SMALL = dict(vocab_size=97, hidden_size=24, num_hidden_layers=3, num_attention_heads=3,
             intermediate_size=40, max_position_embeddings=64)


@pytest.mark.parametrize("config", [small_config(**SMALL), mb.BertConfig.preset("tiny")])
def test_pretraining_parameters_is_what_the_model_and_minibert_info_count(config, tmp_path):
    model = mb.BertForPreTraining(config, seed=0)
    assert M.pretraining_parameters(config) == model.num_parameters()
    model.save_pretrained(tmp_path)
    assert checkpoint_summary(tmp_path)["total_parameters"] == model.num_parameters()


def test_bert_base_and_large_counts():
    # BertModel (109,482,240 and 335,141,888) plus the MLM transform, decoder bias and NSP layer.
    assert M.pretraining_parameters(mb.BertConfig.preset("base")) == 110_106_428
    assert M.pretraining_parameters(mb.BertConfig.preset("large")) == 336_226_108


def test_replica_bytes_by_zero_stage():
    p = 1000
    stages = list(M.ZERO_STAGES)
    assert [M.replica_bytes(p, 4, s) for s in stages] == [16000, 10000, 7000, 4000]
    assert all(M.replica_bytes(p, 1, s) == 16 * p for s in stages)
    with pytest.raises(ValueError, match="stage must be one of"):
        M.replica_bytes(p, 2, "ZeRO-4")
    with pytest.raises(ValueError, match="num_workers"):
        M.replica_bytes(p, 0)


def test_activation_bytes_counts_caches_once_and_no_parameters():
    model = mb.BertForPreTraining(small_config(**SMALL), seed=0).train()
    assert M.activation_bytes(model) == 0  # no forward yet
    ids = np.arange(1, 17).reshape(2, 8)
    model(ids, labels=ids, next_sentence_label=np.zeros(2, dtype=np.int64))
    total = M.activation_bytes(model)
    parameter_bytes = sum(p.nbytes for _, p in model.named_parameters())
    assert 0 < total < parameter_bytes * 10
    # The attention probabilities of each layer are in it: (B, N, T, T) float32.
    probs = model.bert.encoder.layer[0].attention.self.attention_probs
    assert total > probs.nbytes * SMALL["num_hidden_layers"]


def test_attention_activations_grow_with_the_square_of_the_length():
    """Per layer and token, T -> T' adds N (T' - T) attention entries of 4 + 4 + 1 bytes:
    the probabilities, the dropped probabilities and the dropout mask."""
    config = small_config(**SMALL)  # dropout 0.1: both copies and the mask are kept
    short, long = (M.activation_bytes_per_token(config, t) for t in (16, 48))
    heads = SMALL["num_attention_heads"]
    assert long["per_layer"] - short["per_layer"] == pytest.approx(heads * 32 * 9, abs=1e-9)
    assert short["total"] == pytest.approx(short["rest"] + 3 * short["per_layer"])


@pytest.mark.parametrize("preset, seq_len", [("tiny", 32), ("mini", 64)])
def test_the_estimate_before_a_run_holds_what_the_forward_keeps(preset, seq_len):
    # training_memory's formula against the measured caches: at or a little above them, so
    # that a run refused as too large would really not fit, and one let through does.
    config = mb.BertConfig.preset(preset, vocab_size=5000)
    measured = M.activation_bytes_per_token(config, seq_len)["total"]
    estimate = M.activation_estimate_per_token(config, seq_len)
    assert 0.9 * measured <= estimate <= 1.5 * measured, (estimate, measured)
    need = M.training_memory(config, batch_size=8, seq_len=seq_len, workers=2)
    assert need["total"] == (16 + 8) * M.pretraining_parameters(config) + \
        int(estimate * 8 * seq_len)


def test_available_memory_reads_a_bound_where_the_system_has_one():
    found = M.available_memory()
    if found is not None:  # Linux: /proc/meminfo at least
        assert found[0] >= 0 and isinstance(found[1], str)
    assert M.format_bytes(3.2e9) == "3.2 GB" and M.format_bytes(410e6) == "410 MB"


def test_distillation_memory_holds_the_soft_targets_of_every_token():
    """Six (B, T, V) float32 arrays on top of the student's training and the teacher's
    forward: doubling the batch or the vocabulary adds what they add."""
    teacher = small_config(**SMALL)
    base = M.distillation_memory(teacher, 1, 8, 16)
    student = M.training_memory(small_config(**{**SMALL, "num_hidden_layers": 1}), 8, 16)
    soft = 6 * 4 * 8 * 16 * teacher.vocab_size
    teacher_only = 4 * M.pretraining_parameters(teacher) + int(
        M.activation_estimate_per_token(teacher, 16) * 8 * 16)
    assert base["total"] == student["total"] + soft + teacher_only
    wider = small_config(**{**SMALL, "vocab_size": 2 * SMALL["vocab_size"]})
    assert M.distillation_memory(wider, 1, 8, 16)["activations"] - base["activations"] >= soft
