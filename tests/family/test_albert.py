"""ALBERT: gradient checks of the factorised embeddings, the shared encoder and the whole
model; the shared gradient is the sum over the layers; padding changes nothing; bad input
fails clearly; pretraining and the command line run with --architecture albert.

The comparison with transformers is in tests/parity/test_albert_parity.py.
Dimension legend: B batch, T sequence length, E embedding size, H hidden size, V vocabulary.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from small_models import ALBERT_SHARING, SMALL_ALBERT, perturbed, small_albert_config

import minibert as mb
from minibert.base import make_init
from minibert.checks import IGNORE_INDEX
from minibert.cli import main
from minibert.family.albert import (
    AlbertAttention,
    AlbertConfig,
    AlbertEmbeddings,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertLayer,
    AlbertModel,
    AlbertTransformer,
)
from minibert.fill_mask import fill_mask
from minibert.gradcheck import check_loss, check_module
from minibert.gradcheck.suite import MODEL_TOL, SINGLE_LAYER_TOL, perturb_parameters
from minibert.io import safetensors
from minibert.layers import Module
from minibert.training.pretrain import TrainingConfig, pretrain


def padding_mask(rng, batch, seq_len):
    lengths = rng.integers(seq_len // 2, seq_len + 1, size=batch)
    lengths[0] = seq_len
    return (np.arange(seq_len)[None, :] < lengths[:, None]).astype(np.int64)  # (B, T)


def pretraining_batch(config, seed=0, batch=3, seq_len=7):
    """Random ids (no [PAD] at real positions), padding, MLM targets and SOP labels."""
    rng = np.random.default_rng(seed)
    attention_mask = padding_mask(rng, batch, seq_len)
    input_ids = rng.integers(1, config.vocab_size, size=(batch, seq_len))
    input_ids[attention_mask == 0] = config.pad_token_id
    token_type_ids = (np.arange(seq_len)[None] >= seq_len // 2).astype(np.int64) * attention_mask
    labels = np.where(rng.random((batch, seq_len)) < 0.3, input_ids, IGNORE_INDEX)
    labels[attention_mask == 0] = IGNORE_INDEX
    labels[:, 1] = input_ids[:, 1]  # at least one target per row
    return dict(input_ids=input_ids, token_type_ids=token_type_ids,
                attention_mask=attention_mask, labels=labels,
                sentence_order_label=np.array([0, 1, 1])[:batch])


def perturbed_model(config, seed=0, cls=AlbertForPreTraining):
    """A float64 model, every parameter (LayerNorm included) moved off its initial value."""
    return perturbed(cls(config, seed=seed, dtype=np.float64), seed + 1)


def model_gradcheck(model, batch):
    def loss():
        return model(**batch).loss

    return check_loss(model, loss, model.backward, seed=0, max_entries=24)


# -- gradient checks ---------------------------------------------------------------------------

@pytest.mark.parametrize("sharing", ["one-group",
                                     pytest.param("groups-and-inner", marks=pytest.mark.slow)])
def test_whole_pretraining_model_gradcheck(sharing):
    model = perturbed_model(small_albert_config(sharing))
    table = model_gradcheck(model, pretraining_batch(model.config))
    table.assert_below(MODEL_TOL)
    names = {row.name for row in table}
    assert "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight" in names
    assert "albert.encoder.embedding_hidden_mapping_in.weight" in names
    assert len(names) == len(dict(model.named_parameters()))


def test_whole_model_gradcheck_with_dropout():
    # Every dropout on (hidden, attention, SOP head); the checker replays the same masks.
    config = small_albert_config(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                                 classifier_dropout_prob=0.2)
    model = perturbed_model(config, seed=3).train()
    model_gradcheck(model, pretraining_batch(config, seed=3)).assert_below(MODEL_TOL)


def test_masked_lm_gradcheck():
    model = perturbed_model(small_albert_config(), seed=5, cls=AlbertForMaskedLM)
    batch = pretraining_batch(model.config, seed=5)
    del batch["sentence_order_label"]
    model_gradcheck(model, batch).assert_below(MODEL_TOL)


class FactorisedEmbedding(Module):
    """The factorised embedding alone: tables of width E, then the dense E -> H."""

    def __init__(self, embeddings, mapping_in):
        super().__init__()
        self.embeddings = embeddings
        self.embedding_hidden_mapping_in = mapping_in

    def forward(self, input_ids, token_type_ids):
        return self.embedding_hidden_mapping_in(self.embeddings(input_ids, token_type_ids))

    def backward(self, dout):
        self.embeddings.backward(self.embedding_hidden_mapping_in.backward(dout))


class LastHiddenState(Module):
    """The shared encoder with one output array, as check_module wants it."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, embedding_output, mask):
        return self.encoder(embedding_output, mask)[0]

    def backward(self, dout):
        return self.encoder.backward(dout)


def _init(config, seed=0):
    return make_init(config, seed, np.float64)


def test_factorised_embedding_gradcheck():
    config = small_albert_config()
    init = _init(config)
    module = FactorisedEmbedding(AlbertEmbeddings(init), AlbertTransformer(init)
                                 .embedding_hidden_mapping_in)
    perturb_parameters(module, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    ids = rng.integers(1, config.vocab_size, size=(2, 5))  # no [PAD]: its row gets no gradient
    types = rng.integers(0, 2, size=(2, 5))
    assert module.embeddings.word_embeddings.params["weight"].shape == (41, 6)  # (V, E)
    table = check_module(module, {"input_ids": ids, "token_type_ids": types})
    table.assert_below(SINGLE_LAYER_TOL)
    assert {row.name for row in table} == set(dict(module.named_parameters()))


@pytest.mark.parametrize("sharing", list(ALBERT_SHARING))
def test_shared_encoder_gradcheck(sharing):
    config = small_albert_config(sharing)
    module = LastHiddenState(AlbertTransformer(_init(config)))
    perturb_parameters(module, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5, config.embedding_size))  # (B, T, E)
    mask = padding_mask(rng, 3, 5)[:, None, None, :].astype(bool)  # (B, 1, 1, T)
    table = check_module(module, {"embedding_output": x}, forward_kwargs={"mask": mask},
                         max_entries=24)
    table.assert_below(SINGLE_LAYER_TOL)
    assert "embedding_output" in {row.name for row in table}


@pytest.mark.parametrize("cls", [AlbertAttention, AlbertLayer])
def test_block_pieces_gradcheck(cls):
    config = small_albert_config()
    module = cls(_init(config))
    perturb_parameters(module, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, config.hidden_size))
    mask = padding_mask(rng, 2, 5)[:, None, None, :].astype(bool)
    table = check_module(module, {"hidden_states": x}, forward_kwargs={"mask": mask})
    table.assert_below(SINGLE_LAYER_TOL)


# -- the sharing lesson ------------------------------------------------------------------------

SHARED_WEIGHT = "albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight"


def _broken_check(monkeypatch, break_it):
    model = perturbed_model(small_albert_config())
    encoder = model.albert.encoder
    monkeypatch.setattr(encoder, "_backward_one_use", break_it(encoder))
    table = model_gradcheck(model, pretraining_batch(model.config))
    return {row.name for row in table.failures(MODEL_TOL)}


def test_only_the_last_uses_cache_is_caught(monkeypatch):
    # Without the restore, every layer's backward reads the activations of the last use.
    def no_restore(encoder):
        return lambda group, caches, dout: encoder.albert_layer_groups[group].backward(dout)

    failing = _broken_check(monkeypatch, no_restore)
    assert SHARED_WEIGHT in failing
    assert "albert.embeddings.word_embeddings.weight" in failing  # wrong upstream too


def test_assigning_instead_of_adding_is_caught(monkeypatch):
    # "=" instead of "+=": each use's gradient replaces the previous uses' sum.
    def overwrite(encoder):
        correct = encoder._backward_one_use

        def one_use(group, caches, dout):
            for _, module in encoder.albert_layer_groups[group].named_modules():
                for grad in module.grads.values():
                    grad.fill(0)
            return correct(group, caches, dout)

        return one_use

    failing = _broken_check(monkeypatch, overwrite)
    assert SHARED_WEIGHT in failing
    assert "albert.embeddings.word_embeddings.weight" not in failing  # only shared ones


def test_shared_gradient_is_the_sum_over_unshared_copies():
    # An ALBERT with as many groups as layers shares nothing: give each of its L groups a
    # copy of the shared group's weights and it computes the same function, and the
    # shared gradient must be the sum of its L groups' gradients.
    layers = 3
    shared = perturbed_model(small_albert_config(num_hidden_layers=layers))
    unshared = AlbertForPreTraining(small_albert_config(num_hidden_layers=layers,
                                                        num_hidden_groups=layers), dtype=np.float64)
    group_prefix = "albert.encoder.albert_layer_groups."
    weights = dict(shared.named_parameters())
    copies = {}
    for name in dict(unshared.named_parameters()):
        if name.startswith(group_prefix):
            _, rest = name[len(group_prefix):].split(".", 1)
            copies[name] = weights[f"{group_prefix}0.{rest}"]
        else:
            copies[name] = weights[name]
    unshared.load_state_dict(copies, strict=True)
    batch = pretraining_batch(shared.config, seed=4)
    outputs = []
    for model in (shared, unshared):
        outputs.append(model(**batch).loss)
        model.zero_grad()
        model.backward()
    assert abs(outputs[0] - outputs[1]) <= 1e-13 * abs(outputs[1])
    theirs = dict(unshared.named_gradients())
    for name, grad in shared.named_gradients():
        if name.startswith(group_prefix):
            _, rest = name[len(group_prefix):].split(".", 1)
            expected = sum(theirs[f"{group_prefix}{g}.{rest}"] for g in range(layers))
        else:
            expected = theirs[name]
        scale = np.linalg.norm(expected)
        assert np.linalg.norm(grad - expected) <= 1e-12 * max(scale, 1e-300), name
    # and the layers did contribute different gradients (the sum is not L times one of them)
    per_layer = [theirs[f"{group_prefix}{g}.albert_layers.0.ffn.weight"] for g in range(layers)]
    assert not np.allclose(per_layer[0], per_layer[1])


# -- invariances and outputs -------------------------------------------------------------------

def test_padding_changes_nothing_at_real_positions():
    model = perturbed_model(small_albert_config("groups-and-inner"), seed=6).eval()  # no dropout
    rng = np.random.default_rng(6)
    real = 5
    ids = rng.integers(1, model.config.vocab_size, size=(2, real))
    types = np.array([[0, 0, 1, 1, 1], [0, 0, 0, 1, 1]])
    labels = np.where(rng.random((2, real)) < 0.5, ids, IGNORE_INDEX)
    labels[:, 0] = ids[:, 0]
    padded = {name: np.concatenate([value, np.full((2, 3), fill)], axis=1)
              for name, value, fill in (("input_ids", ids, 0), ("token_type_ids", types, 0),
                                        ("labels", labels, IGNORE_INDEX))}
    padded["attention_mask"] = np.concatenate([np.ones((2, real), int), np.zeros((2, 3), int)],
                                              axis=1)
    sop = np.array([1, 0])
    results = []
    for inputs in ({"input_ids": ids, "token_type_ids": types, "labels": labels},
                   padded):
        out = model(**inputs, sentence_order_label=sop, output_attentions=True)
        model.zero_grad()
        model.backward()
        results.append((out, {k: g.copy() for k, g in model.named_gradients()}))
    (short, short_grads), (long, long_grads) = results
    np.testing.assert_allclose(long.prediction_logits[:, :real], short.prediction_logits,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(long.sop_logits, short.sop_logits, rtol=1e-12, atol=1e-12)
    assert abs(long.loss - short.loss) < 1e-12
    for ours, theirs in zip(long.attentions, short.attentions, strict=True):
        assert np.all(ours[..., real:] == 0.0)  # padding keys get probability exactly 0
        np.testing.assert_allclose(ours[:, :, :real, :real], theirs, rtol=1e-12, atol=1e-14)
    for name, grad in short_grads.items():
        np.testing.assert_allclose(long_grads[name], grad, rtol=1e-10, atol=1e-13,
                                   err_msg=name)


def test_outputs_and_counts():
    config = small_albert_config("groups-and-inner")
    model = AlbertForPreTraining(config, dtype=np.float64).eval()
    batch = pretraining_batch(config)
    out = model(**batch, output_attentions=True, output_hidden_states=True)
    blocks = config.num_hidden_layers * config.inner_group_num
    assert out.prediction_logits.shape == (3, 7, 41) and out.sop_logits.shape == (3, 2)
    assert len(out.attentions) == blocks and out.attentions[0].shape == (3, 2, 7, 7)
    assert len(out.hidden_states) == blocks + 1 and out.hidden_states[0].shape == (3, 7, 8)
    assert out.loss == pytest.approx(out.masked_lm_loss + out.sentence_order_loss)
    assert out.seq_relationship_logits is out.sop_logits
    # the parameters: two groups of two blocks whatever the layer count; one word table
    names = dict(model.named_parameters())
    assert "predictions.decoder.weight" not in names
    assert model.state_dict()["predictions.decoder.weight"] is \
        names["albert.embeddings.word_embeddings.weight"]
    assert model.state_dict()["predictions.decoder.bias"] is names["predictions.bias"]
    base = AlbertModel(config)
    assert base.num_parameters() == config.num_parameters_estimate()
    assert sum(1 for n in names if n.endswith("attention.query.weight")) == 4
    more_layers = AlbertModel(small_albert_config("groups-and-inner", num_hidden_layers=8))
    assert more_layers.num_parameters() == base.num_parameters()  # layers are free


def test_state_dict_round_trip():
    config = small_albert_config()
    model = perturbed_model(config, seed=7).eval()
    fresh = AlbertForPreTraining(config, seed=8, dtype=np.float64).eval()
    missing, unexpected = fresh.load_state_dict(model.state_dict(), strict=True)
    assert missing == unexpected == []
    batch = pretraining_batch(config)
    reference = model(**batch).loss
    assert fresh(**batch).loss == pytest.approx(reference, rel=1e-12)
    state = model.state_dict()
    del state["albert.encoder.embedding_hidden_mapping_in.bias"]
    with pytest.raises(ValueError, match="missing keys.*embedding_hidden_mapping_in.bias"):
        fresh.load_state_dict(state, strict=True)


def test_save_and_load_pretrained(tmp_path):
    config = small_albert_config("groups-and-inner")
    model = perturbed_model(config, seed=9)
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["model_type"] == "albert" and saved["embedding_size"] == 6
    assert saved["architectures"] == ["AlbertForPreTraining"]
    loaded = AlbertForPreTraining.from_pretrained(tmp_path, dtype=np.float64)
    batch = pretraining_batch(config)
    assert loaded(**batch).loss == model.eval()(**batch).loss
    with pytest.warns(UserWarning, match="ignored"):  # the pooler and the SOP head
        masked = AlbertForMaskedLM.from_pretrained(tmp_path, dtype=np.float64)
    assert masked.config == loaded.config


# -- config ------------------------------------------------------------------------------------

def test_config_defaults_and_preset():
    default = AlbertConfig()
    assert (default.vocab_size, default.embedding_size, default.hidden_size,
            default.num_attention_heads, default.intermediate_size) == (30000, 128, 4096, 64,
                                                                        16384)
    assert default.hidden_act == "gelu_new" and default.hidden_dropout_prob == 0.0
    assert default.classifier_dropout_prob == 0.1 and default.inner_group_num == 1
    tiny, bert = AlbertConfig.preset("tiny"), mb.BertConfig.preset("tiny")
    for name in ("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size"):
        assert getattr(tiny, name) == getattr(bert, name), name
    assert tiny.embedding_size == 64 < tiny.hidden_size
    assert AlbertConfig.preset("base", vocab_size=30000).num_parameters_estimate() == 11_683_584
    assert AlbertConfig.preset("tiny", embedding_size=32).embedding_size == 32


def test_config_dict_and_json_round_trip(tmp_path):
    config = small_albert_config("groups-and-inner")
    data = config.to_dict()
    assert data["model_type"] == "albert" and data["num_hidden_groups"] == 2
    assert AlbertConfig.from_dict(data) == config
    with_unknown = {**data, "tie_word_embeddings": True, "some_future_key": [1, 2]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(with_unknown))
    loaded = AlbertConfig.from_json_file(path)
    assert loaded.extra == {"tie_word_embeddings": True, "some_future_key": [1, 2]}
    loaded.to_json_file(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == with_unknown
    assert "embedding_size=6" in repr(config)


@pytest.mark.parametrize("fields, error, message", [
    (dict(embedding_size=16), ValueError,
     r"embedding_size \(16\) must be at most hidden_size \(8\).*factorises.*to shrink"),
    (dict(num_hidden_layers=3, num_hidden_groups=2), ValueError,
     r"num_hidden_layers \(3\) must be divisible by num_hidden_groups \(2\)"),
    (dict(num_attention_heads=3), ValueError,
     r"hidden_size \(8\) must be divisible by num_attention_heads \(3\)"),
    (dict(embedding_size=0), ValueError, "embedding_size must be a positive integer, got 0"),
    (dict(num_hidden_groups=1.5), ValueError, "num_hidden_groups must be a positive integer"),
    (dict(inner_group_num=-1), ValueError, "inner_group_num must be a positive integer"),
    (dict(classifier_dropout_prob=1.0), ValueError,
     r"classifier_dropout_prob must be a number in \[0, 1\), got 1.0"),
    (dict(hidden_act="swish"), ValueError, "hidden_act must be one of"),
])
def test_config_refuses_bad_fields(fields, error, message):
    with pytest.raises(error, match=message):
        AlbertConfig(**{**SMALL_ALBERT, **fields})


def test_config_refuses_other_model_types_and_presets():
    with pytest.raises(ValueError, match="model_type must be 'albert'.*got 'bert'"):
        AlbertConfig.from_dict({**small_albert_config().to_dict(), "model_type": "bert"})
    with pytest.raises(ValueError, match="preset must be one of"):
        AlbertConfig.preset("xxlarge")
    with pytest.raises(TypeError, match="config must be an AlbertConfig, got BertConfig"):
        AlbertModel(mb.BertConfig.preset("tiny"))
    with pytest.raises(TypeError, match="config must be an AlbertConfig, got BertConfig"):
        AlbertForPreTraining(mb.BertConfig.preset("tiny"))
    with pytest.raises(TypeError, match="config must be a BertConfig, got AlbertConfig"):
        mb.BertModel(small_albert_config())


def test_bad_inputs_fail_clearly():
    model = AlbertForPreTraining(small_albert_config())
    batch = pretraining_batch(model.config)
    with pytest.raises(IndexError, match="input_ids"):
        model(np.array([[1, 41]]))
    with pytest.raises(IndexError, match="token_type_ids"):
        model(np.array([[1, 2]]), token_type_ids=np.array([[0, 2]]))
    with pytest.raises(ValueError, match="longer than max_position_embeddings=16"):
        model(np.ones((1, 17), dtype=int))
    with pytest.raises(IndexError, match="sentence_order_label"):
        model(**{**batch, "sentence_order_label": np.array([0, 1, 2])})
    with pytest.raises(ValueError, match=r"sentence_order_label must have shape \(B,\) = \(3,\)"):
        model(**{**batch, "sentence_order_label": np.array([0, 1])})
    with pytest.raises(ValueError, match="labels must have the shape of input_ids"):
        model(**{**batch, "labels": batch["labels"][:, :3]})
    with pytest.raises(TypeError, match="next_sentence_label"):
        model(batch["input_ids"], next_sentence_label=np.array([0, 1, 1]))
    model(batch["input_ids"])  # no labels: no loss, nothing to differentiate
    with pytest.raises(RuntimeError, match="needs a forward pass with labels"):
        model.backward()


def test_pad_row_gets_no_gradient_from_the_lookup():
    model = AlbertModel(small_albert_config(), dtype=np.float64)
    assert np.all(model.embeddings.word_embeddings.params["weight"][0] == 0.0)
    batch = pretraining_batch(model.config)
    out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"])
    assert (batch["input_ids"] == 0).any()
    model.backward(np.random.default_rng(0).standard_normal(out.last_hidden_state.shape))
    assert np.all(model.embeddings.word_embeddings.grads["weight"][0] == 0.0)


# -- pretraining and the command line ----------------------------------------------------------

TRAIN = dict(steps=6, batch_size=8, max_seq_length=32, vocab_size=400, num_documents=60,
             num_heldout_documents=10, dupe_factor=1, eval_every=3, eval_batches=1,
             log_every=2, learning_rate=2e-3, dropout=0.1, schedule="linear")


class Interrupt(Exception):
    pass


def test_pretraining_with_albert_runs_resumes_and_loads(tmp_path):
    config = TrainingConfig(**TRAIN, architecture="albert", objective="sop", save_every=2)
    messages = []
    metrics = pretrain(config, tmp_path / "run", progress=messages.append)
    assert any("AlbertForPreTraining preset 'tiny'" in m for m in messages)
    assert metrics["steps"] == 6 and 0 <= metrics["next_sentence_accuracy"] <= 1
    model = AlbertForPreTraining.from_pretrained(tmp_path / "run")
    assert model.config.embedding_size == 64 and model.config.hidden_size == 128
    assert model.config.classifier_dropout_prob == 0.1
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert "next_sentence_accuracy" in history[0]  # the SOP head was trained
    saved = json.loads((tmp_path / "run" / "training_config.json").read_text())
    assert saved["architecture"] == "albert"

    def stop_at_three(step):
        if step == 3:
            raise Interrupt

    with pytest.raises(Interrupt):
        pretrain(config, tmp_path / "cut", progress=lambda m: None, step_hook=stop_at_three)
    pretrain(config, tmp_path / "cut", resume=True, progress=lambda m: None)
    a = safetensors.load_file(tmp_path / "run" / "model.safetensors", mmap=False)
    b = safetensors.load_file(tmp_path / "cut" / "model.safetensors", mmap=False)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)

    tokenizer = mb.BertTokenizer(tmp_path / "run" / "vocab.txt")
    with pytest.warns(UserWarning, match="ignored"):
        masked = AlbertForMaskedLM.from_pretrained(tmp_path / "run")
    answers = fill_mask(masked, tokenizer, "the [MASK] of the river.", top_k=3)
    assert len(answers) == 3


def test_training_config_architecture():
    assert TrainingConfig().architecture == "bert"
    with pytest.raises(ValueError, match="objective 'nsp' does not go with architecture "
                                         "'albert'.*use objective 'sop'"):
        TrainingConfig(architecture="albert")
    with pytest.raises(ValueError, match="architecture must be one of"):
        TrainingConfig(architecture="gpt")
    assert TrainingConfig(architecture="albert", objective="mlm").objective == "mlm"
    # an old run's settings (no architecture key) still read as BERT
    old = {k: v for k, v in TrainingConfig().to_dict().items() if k != "architecture"}
    assert TrainingConfig.from_dict(old).architecture == "bert"


def test_cli_pretrain_and_fill_mask_with_albert(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["pretrain", "--architecture", "albert", "--out", str(out), "--steps", "2",
                 "--batch-size", "8", "--vocab-size", "400", "--num-documents", "40",
                 "--eval-every", "2", "--save-seconds", "0", "--json"])
    assert code == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["objective"] == "sop"  # ALBERT's default
    assert json.loads((out / "config.json").read_text())["model_type"] == "albert"
    assert main(["fill-mask", "--model", str(out), "the [MASK] of the river.", "--json",
                 "--top-k", "2"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main(["info", str(out)]) == 0
    info = capsys.readouterr().out
    assert "embedding_size             64" in info and "encoder.albert_layer_groups.0" in info
    assert "heads: predictions, sop_classifier" in info
    code = main(["pretrain", "--architecture", "albert", "--objective", "nsp", "--out",
                 str(tmp_path / "nsp")])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert "objective 'nsp' does not go with architecture 'albert'" in error


def test_gradcheck_suite_has_albert_cases():
    from minibert.gradcheck.suite import albert_cases

    names = []
    for name, run in albert_cases():
        run().assert_below(MODEL_TOL)
        names.append(name)
    assert names == ["AlbertForPreTraining(3 layers sharing 1 block)"]


def test_backward_weights_scale_the_two_loss_parts():
    config = small_albert_config()
    model = perturbed_model(config, seed=11).eval()
    batch = pretraining_batch(config, seed=11)
    labels_only = {k: v for k, v in batch.items() if k != "sentence_order_label"}
    sop_only = {k: v for k, v in batch.items() if k != "labels"}
    grads = []
    for inputs, weights in ((labels_only, {}), (sop_only, {}), (batch, dict(mlm_weight=0.25,
                                                                            sop_weight=2.0))):
        model(**inputs)
        model.zero_grad()
        model.backward(**weights)
        grads.append({k: g.copy() for k, g in model.named_gradients()})
    mlm, sop, weighted = grads
    for name, grad in weighted.items():
        if name.endswith("attention.key.bias"):
            # The true gradient is exactly 0 (softmax ignores a constant added to a row of
            # scores): only rounding noise, tiny next to the query bias's gradient.
            partner = weighted[name.replace("key.bias", "query.bias")]
            assert np.linalg.norm(grad) < 1e-12 * np.linalg.norm(partner)
            continue
        expected = 0.25 * mlm[name] + 2.0 * sop[name]
        assert np.linalg.norm(grad - expected) <= 1e-12 * max(np.linalg.norm(expected), 1e-300)
    model(**batch)
    with pytest.raises(TypeError, match="sop_weight must be a real number"):
        model.backward(sop_weight="1")
