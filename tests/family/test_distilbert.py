"""DistilBERT: config, gradient checks of every part and of the whole model, padding,
state dicts and checkpoints; the two distillation losses' gradient checks.

All gradient checks run in float64 with parameters moved off their initial values
(LayerNorm scales and shifts included) and random upstream gradients.
"""

from __future__ import annotations

import json
import operator
import warnings

import numpy as np
import pytest
from small_models import make_batch, perturbed, small_distilbert_config

import minibert as mb
from minibert.base import make_init
from minibert.checks import IGNORE_INDEX
from minibert.family import distillation as D
from minibert.family.distilbert import (
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertModel,
    DistilBertSelfAttention,
    DistilBertTransformerBlock,
    sinusoidal_position_table,
)
from minibert.gradcheck import check_function, check_loss, check_module
from minibert.gradcheck.suite import MODEL_TOL, SINGLE_LAYER_TOL, function_cases

# DistilBERT's MLM batches: no token types, MLM targets at 40% of the real tokens (at least
# the first of each row), no next-sentence label; ROWS unpacks the three arrays.
MLM = dict(segments=False, mlm_share=0.4, first_target=0, next_sentence=False)
ROWS = operator.itemgetter("input_ids", "attention_mask", "labels")


# -- config ------------------------------------------------------------------------------------

def test_config_defaults_are_distilbert_base():
    config = DistilBertConfig()
    assert (config.vocab_size, config.max_position_embeddings, config.n_layers, config.n_heads,
            config.dim, config.hidden_dim) == (30522, 512, 6, 12, 768, 3072)
    assert (config.dropout, config.attention_dropout, config.activation,
            config.initializer_range, config.qa_dropout, config.seq_classif_dropout,
            config.pad_token_id, config.sinusoidal_pos_embds) == (
        0.1, 0.1, "gelu", 0.02, 0.1, 0.2, 0, False)
    assert config.to_dict()["model_type"] == "distilbert" == DistilBertConfig.model_type
    # BERT's names are aliases of DistilBERT's, as HF's attribute_map has them
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.intermediate_size, config.head_size, config.layer_norm_eps) == (
        768, 6, 12, 3072, 64, 1e-12)


def test_parameter_count_of_distilbert_base():
    # transformers' DistilBertModel(DistilBertConfig()) has 66,362,880 parameters
    # (counted with transformers 5.23; tests/parity checks it against the library).
    assert DistilBertConfig().num_parameters_estimate() == 66_362_880
    assert DistilBertConfig().required_checkpoint_numbers() == 66_362_880


@pytest.mark.parametrize("sinusoidal", [False, True])
def test_parameter_count_estimate_equals_the_model(sinusoidal):
    config = small_distilbert_config(sinusoidal_pos_embds=sinusoidal)
    model = DistilBertModel(config)
    assert model.num_parameters() == config.num_parameters_estimate()
    head = DistilBertForMaskedLM(config)
    h, v = config.dim, config.vocab_size
    assert head.num_parameters() == model.num_parameters() + (h * h + h) + 2 * h + v


def test_config_round_trip_keeps_unknown_keys(tmp_path):
    config = small_distilbert_config(activation="relu",
                                     extra={"architectures": ["X"], "foo": [1, 2]})
    path = tmp_path / "config.json"
    config.to_json_file(path)
    data = json.loads(path.read_text())
    assert data["foo"] == [1, 2] and data["model_type"] == "distilbert"
    again = DistilBertConfig.from_json_file(path)
    assert again.to_dict() == config.to_dict()
    assert DistilBertConfig.from_dict({"dim": 8, "n_heads": 2, "bos_token_id": None}).extra == {
        "bos_token_id": None}


@pytest.mark.parametrize("fields, message", [
    ({"dim": 10, "n_heads": 3}, "dim (10) must be divisible by n_heads (3)"),
    ({"n_layers": 0}, "n_layers must be a positive integer"),
    ({"activation": "swish"}, "activation must be one of"),
    ({"dropout": 1.0}, "dropout must be a number in [0, 1)"),
    ({"pad_token_id": 99, "vocab_size": 10}, "pad_token_id must be an integer in [0, vocab_size"),
    ({"sinusoidal_pos_embds": "yes"}, "sinusoidal_pos_embds must be true or false"),
    ({"extra": {"tie_word_embeddings": False}}, "tie_word_embeddings must be true"),
])
def test_config_errors_name_the_field(fields, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        DistilBertConfig(**fields)


def test_config_refuses_a_bert_config_json(tmp_path):
    path = tmp_path / "config.json"
    mb.BertConfig(hidden_size=8, num_attention_heads=2).to_json_file(path)
    with pytest.raises(ValueError, match="model_type must be 'distilbert', got 'bert'"):
        DistilBertConfig.from_json_file(path)
    with pytest.raises(TypeError, match="config must be a DistilBertConfig"):
        DistilBertModel(mb.BertConfig())


# -- gradient checks ---------------------------------------------------------------------------

def test_blocks_gradcheck():
    config = small_distilbert_config()
    init = make_init(config, 0, np.float64)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, config.dim))
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=bool)[:, None, None, :]
    for module in (DistilBertSelfAttention(init), DistilBertTransformerBlock(init)):
        table = check_module(perturbed(module, 1), {"hidden_states": x},
                             forward_kwargs={"mask": mask})
        assert not table.failures(SINGLE_LAYER_TOL), table.to_text()
        assert {row.name for row in table.rows} >= {"hidden_states"}


@pytest.mark.parametrize("dropout", [0.0, 0.1], ids=["no-dropout", "dropout"])
def test_masked_lm_whole_model_gradcheck(dropout):
    config = small_distilbert_config(dropout=dropout, attention_dropout=dropout, activation="gelu")
    model = perturbed(DistilBertForMaskedLM(config, dtype=np.float64), 1)
    model.train(dropout > 0)
    input_ids, attention_mask, labels = ROWS(make_batch(config, **MLM))

    def loss():
        return model(input_ids, attention_mask, labels=labels).loss

    table = check_loss(model, loss, model.backward, max_entries=24)
    assert not table.failures(MODEL_TOL), table.to_text()
    names = {row.name for row in table.rows}
    assert names == {name for name, _ in model.named_parameters()}
    # every parameter, LayerNorms and the tied embeddings included, gets a gradient
    for row in table.rows:
        assert row.analytic_norm > 0, row.name


def test_base_model_gradcheck_with_random_upstream_gradient():
    config = small_distilbert_config(activation="gelu_new")
    model = perturbed(DistilBertModel(config, dtype=np.float64), 1)
    model.eval()
    input_ids, attention_mask, _ = ROWS(make_batch(config, seed=3, **MLM))
    rng = np.random.default_rng(5)
    d_last = rng.standard_normal((*input_ids.shape, config.dim))  # (B, T, H)
    # Zero at padding positions, as any loss is: there the input is [PAD], whose embedding
    # row gets no gradient by design (HF's padding_idx), unlike what finite differences see.
    d_last *= attention_mask[..., None]

    def surrogate():
        out = model(input_ids, attention_mask).last_hidden_state
        return float(np.sum(out * d_last))

    table = check_loss(model, surrogate, lambda: model.backward(d_last), max_entries=24)
    assert not table.failures(MODEL_TOL), table.to_text()


def test_sinusoidal_position_table():
    table = sinusoidal_position_table(5, 6)
    assert np.array_equal(table[0], [0, 1, 0, 1, 0, 1])
    # columns 2k and 2k+1 share the frequency 1 / 10000^(2k / dim)
    for k in range(3):
        angle = np.arange(5) / 10000 ** (2 * k / 6)
        np.testing.assert_allclose(table[:, 2 * k], np.sin(angle), rtol=0, atol=1e-15)
        np.testing.assert_allclose(table[:, 2 * k + 1], np.cos(angle), rtol=0, atol=1e-15)
    model = DistilBertModel(small_distilbert_config(sinusoidal_pos_embds=True), dtype=np.float64)
    weight = model.embeddings.position_embeddings.params["weight"]
    assert np.array_equal(weight, sinusoidal_position_table(16, 12))


# -- invariances -------------------------------------------------------------------------------

def test_padding_changes_nothing_at_real_positions():
    config = small_distilbert_config()
    model = perturbed(DistilBertForMaskedLM(config, dtype=np.float64), 1).eval()
    input_ids, _, labels = ROWS(make_batch(config, lengths=(7,), **MLM))
    short = model(input_ids, labels=labels, output_attentions=True,
                  output_hidden_states=True)
    short_logits = short.logits.copy()
    padded_ids = np.concatenate([input_ids, np.zeros((1, 4), dtype=np.int64)], axis=1)
    padded_labels = np.concatenate([labels, np.full((1, 4), IGNORE_INDEX)], axis=1)
    mask = np.concatenate([np.ones((1, 7)), np.zeros((1, 4))], axis=1).astype(np.int64)
    long = model(padded_ids, mask, labels=padded_labels, output_attentions=True,
                 output_hidden_states=True)
    np.testing.assert_allclose(long.logits[:, :7], short_logits, rtol=1e-12, atol=1e-12)
    assert abs(long.loss - short.loss) < 1e-12
    for ours, theirs in zip(long.hidden_states, short.hidden_states, strict=True):
        np.testing.assert_allclose(ours[:, :7], theirs, rtol=1e-12, atol=1e-12)
    for attention in long.attentions:
        assert np.all(attention[..., 7:] == 0.0)  # padding keys get probability exactly 0
        np.testing.assert_allclose(attention.sum(-1), 1.0)


# -- state dicts and checkpoints ---------------------------------------------------------------

def test_state_dict_lists_the_tied_alias_and_loads_strictly():
    model = perturbed(DistilBertForMaskedLM(small_distilbert_config()), 1)
    state = model.state_dict()
    assert state["vocab_projector.weight"] is state["distilbert.embeddings.word_embeddings.weight"]
    assert "vocab_projector.weight" not in dict(model.named_parameters())
    other = DistilBertForMaskedLM(small_distilbert_config(), seed=7)
    other.load_state_dict({k: v.copy() for k, v in state.items()}, strict=True)
    for name, value in model.named_parameters():
        assert np.array_equal(dict(other.named_parameters())[name], value)
    with pytest.raises(ValueError, match="missing keys"):
        other.load_state_dict({k: v for k, v in state.items() if "vocab_transform" not in k})


def test_save_and_from_pretrained_round_trip(tmp_path):
    config = small_distilbert_config()
    model = perturbed(DistilBertForMaskedLM(config), 1).eval()
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["architectures"] == ["DistilBertForMaskedLM"]
    assert saved["model_type"] == "distilbert"
    loaded = DistilBertForMaskedLM.from_pretrained(tmp_path)
    input_ids, attention_mask, _ = ROWS(make_batch(config, **MLM))
    assert np.array_equal(loaded(input_ids, attention_mask).logits,
                          model(input_ids, attention_mask).logits)
    with pytest.warns(UserWarning, match="ignored 5 checkpoint weights"):
        base = DistilBertModel.from_pretrained(tmp_path)
    assert np.array_equal(base(input_ids, attention_mask).last_hidden_state,
                          model.distilbert(input_ids, attention_mask).last_hidden_state)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="model_type must be 'bert', got 'distilbert'"):
            mb.BertForMaskedLM.from_pretrained(tmp_path)


def test_inputs_are_checked():
    model = DistilBertForMaskedLM(small_distilbert_config())
    with pytest.raises(IndexError):
        model(np.array([[1, 99]]))
    with pytest.raises(ValueError, match="longer than max_position_embeddings=16"):
        model(np.ones((1, 17), dtype=np.int64))
    with pytest.raises(ValueError, match="labels must have the shape"):
        model(np.ones((1, 3), dtype=np.int64), labels=np.ones((1, 2), dtype=np.int64))
    with pytest.raises(TypeError):
        model(np.ones((1, 3), dtype=np.int64), token_type_ids=np.zeros((1, 3)))
    with pytest.raises(RuntimeError, match="forward pass with labels"):
        model.backward()


# -- the distillation losses -------------------------------------------------------------------

def test_distillation_losses_pass_their_gradient_checks():
    cases = dict(function_cases())
    for name in ("soft_target_kl", "cosine_embedding"):
        table = cases[name]()
        assert not table.failures(SINGLE_LAYER_TOL), table.to_text()
        assert len(table.rows) == 1  # the student's input: the teacher's is a fixed target


def _loss_inputs(seed=0):
    rng = np.random.default_rng(seed)
    student = 2.0 * rng.standard_normal((3, 5, 7))
    teacher = 2.0 * rng.standard_normal((3, 5, 7))
    mask = rng.random((3, 5)) < 0.7
    return student, teacher, mask


def _kl_backward_without_t_squared(dloss, cache):
    d, _ = D.soft_target_kl_backward(dloss, cache)
    return d / cache.temperature**2, None


def _kl_backward_without_one_over_t(dloss, cache):
    d, _ = D.soft_target_kl_backward(dloss, cache)
    return d * cache.temperature, None


def _kl_backward_mean_over_all_rows(dloss, cache):
    d, _ = D.soft_target_kl_backward(dloss, cache)
    return d * cache.count / np.prod(cache.input_shape[:-1]), None


def _cosine_backward_without_norm_term(dloss, cache):
    d_rows = -float(dloss) / cache.count * cache.teacher / np.sqrt(
        cache.student_sq * cache.teacher_sq)
    return D._scatter_rows(d_rows, cache.selected, cache.input_shape), None


@pytest.mark.parametrize("broken", [_kl_backward_without_t_squared,
                                    _kl_backward_without_one_over_t,
                                    _kl_backward_mean_over_all_rows])
def test_a_broken_soft_target_backward_is_caught(broken):
    student, teacher, mask = _loss_inputs()
    inputs = {"student_logits": student, "teacher_logits": teacher}
    kwargs = {"mask": mask, "temperature": 2.0}
    good = check_function(D.soft_target_kl_forward, D.soft_target_kl_backward, inputs,
                          kwargs=kwargs)
    bad = check_function(D.soft_target_kl_forward, broken, inputs, kwargs=kwargs)
    assert not good.failures(SINGLE_LAYER_TOL)
    assert bad.failures(SINGLE_LAYER_TOL)


def test_a_broken_cosine_backward_is_caught():
    student, teacher, mask = _loss_inputs(1)
    inputs = {"student_hidden": student, "teacher_hidden": teacher}
    good = check_function(D.cosine_embedding_forward, D.cosine_embedding_backward, inputs,
                          kwargs={"mask": mask})
    bad = check_function(D.cosine_embedding_forward, _cosine_backward_without_norm_term,
                         inputs, kwargs={"mask": mask})
    assert not good.failures(SINGLE_LAYER_TOL)
    assert bad.failures(SINGLE_LAYER_TOL)


def test_soft_target_loss_values():
    student, teacher, mask = _loss_inputs(2)
    # identical distributions: KL 0 and gradient 0, whatever T
    loss, cache = D.soft_target_kl_forward(teacher, teacher.copy(), mask, temperature=3.0)
    assert abs(loss) < 1e-14
    assert np.abs(D.soft_target_kl_backward(1.0, cache)[0]).max() < 1e-15
    # T^2 * mean over the selected rows of KL, written out
    loss, cache = D.soft_target_kl_forward(student, teacher, mask, temperature=2.0)
    rows = []
    for s, t in zip(student[mask], teacher[mask], strict=True):
        p = np.exp(t / 2) / np.exp(t / 2).sum()
        q = np.exp(s / 2) / np.exp(s / 2).sum()
        rows.append(np.sum(p * np.log(p / q)))
    assert loss == pytest.approx(4.0 * np.mean(rows), rel=1e-12)
    # rows outside the mask get exactly zero gradient; nothing selected gives 0 and zeros
    d_student, d_teacher = D.soft_target_kl_backward(1.0, cache)
    assert d_teacher is None and np.all(d_student[~mask] == 0.0)
    empty, cache = D.soft_target_kl_forward(student, teacher, np.zeros((3, 5), bool))
    assert empty == 0.0 and np.all(D.soft_target_kl_backward(1.0, cache)[0] == 0.0)


def test_cosine_loss_values():
    s = np.array([[[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]])  # (1, 3, 2)
    t = np.array([[[3.0, 0.0], [1.0, 0.0], [1.0, 1.0]]])
    loss, _ = D.cosine_embedding_forward(s, t)
    assert loss == pytest.approx((0.0 + 1.0 + 1.0) / 3)  # parallel, orthogonal, zero vector
    loss, cache = D.cosine_embedding_forward(s, t, np.array([[1, 0, 0]]))
    assert loss == pytest.approx(0.0)
    assert np.all(np.isfinite(D.cosine_embedding_backward(1.0, cache)[0]))


@pytest.mark.parametrize("call, message", [
    (lambda: D.soft_target_kl_forward(np.zeros((2, 3)), np.zeros((2, 4))),
     "must have one shape"),
    (lambda: D.soft_target_kl_forward(np.zeros((2, 3)), np.zeros((2, 3)), temperature=0.0),
     "temperature must be a finite number > 0"),
    (lambda: D.soft_target_kl_forward(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(3)),
     r"mask must have shape \(2,\)"),
    (lambda: D.cosine_embedding_forward(np.zeros((2, 3)), np.zeros((2, 3)), np.full(2, 2)),
     "mask must hold only 0/1"),
])
def test_loss_argument_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
