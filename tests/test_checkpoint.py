"""from_pretrained / save_pretrained / info without torch: round trips and refusals."""

import json
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

import minibert as mb
from minibert.io import safetensors
from minibert.io.checkpoint import checkpoint_summary, load_tokenizer


def tiny_config(**overrides):
    values = dict(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=24)
    values.update(overrides)
    return mb.BertConfig(**values)


@pytest.fixture
def saved(tmp_path):
    model = mb.BertForPreTraining(tiny_config(), seed=3)
    for _, value in model.named_parameters():
        value += np.random.default_rng(0).normal(0, 0.1, value.shape).astype(value.dtype)
    folder = model.save_pretrained(tmp_path / "ckpt")
    return model, folder


def test_round_trip_is_bit_identical(saved):
    model, folder = saved
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors"]
    loaded = mb.BertForPreTraining.from_pretrained(folder)
    assert loaded.loading_info == {"missing_keys": [], "unexpected_keys": [],
                                   "initialized_heads": []}
    for (name, a), (name_b, b) in zip(model.named_parameters(), loaded.named_parameters()):
        assert name == name_b and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert not loaded.training  # eval mode, as HF
    ids = np.array([[2, 5, 9, 3]])
    model.eval()
    np.testing.assert_array_equal(model(ids).prediction_logits, loaded(ids).prediction_logits)


def test_tied_weights_are_stored_once_under_canonical_names(saved):
    _, folder = saved
    infos, metadata = safetensors.read_header(folder / "model.safetensors")
    assert "bert.embeddings.word_embeddings.weight" in infos
    assert "cls.predictions.decoder.weight" not in infos
    assert "cls.predictions.bias" in infos
    assert metadata == {"format": "pt"}
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["BertForPreTraining"]
    assert config["model_type"] == "bert" and config["torch_dtype"] == "float32"


def test_load_as_float64(saved):
    model, folder = saved
    loaded = mb.BertForPreTraining.from_pretrained(folder, dtype=np.float64)
    assert loaded.dtype == np.float64
    np.testing.assert_array_equal(loaded.state_dict()["cls.predictions.bias"],
                                  model.state_dict()["cls.predictions.bias"].astype(np.float64))


def test_base_checkpoint_without_prefix_into_pretraining_model_warns_about_heads(tmp_path):
    base = mb.BertModel(tiny_config(), seed=1)
    folder = base.save_pretrained(tmp_path / "base")
    assert not any(k.startswith("bert.") for k in safetensors.read_header(
        folder / "model.safetensors")[0])
    with pytest.warns(UserWarning, match=r"initialized from seed 0: heads \['cls.predictions', "
                                         r"'cls.seq_relationship'\]"):
        model = mb.BertForPreTraining.from_pretrained(folder)
    np.testing.assert_array_equal(model.state_dict()["bert.encoder.layer.1.output.dense.weight"],
                                  base.state_dict()["encoder.layer.1.output.dense.weight"])
    assert model.loading_info["initialized_heads"] == ["cls.predictions", "cls.seq_relationship"]


def test_pretraining_checkpoint_into_base_model_strips_prefix(saved):
    model, folder = saved
    with pytest.warns(UserWarning, match="ignored .* checkpoint weights .*cls.predictions"):
        base = mb.BertModel.from_pretrained(folder)
    np.testing.assert_array_equal(base.state_dict()["pooler.dense.weight"],
                                  model.state_dict()["bert.pooler.dense.weight"])


def test_masked_lm_from_pretraining_checkpoint(saved):
    model, folder = saved
    with pytest.warns(UserWarning, match="cls.seq_relationship"):
        mlm = mb.BertForMaskedLM.from_pretrained(folder)
    ids = np.array([[2, 7, 7, 3]])
    model.eval()
    np.testing.assert_array_equal(mlm(ids).logits, model(ids).prediction_logits)


def test_position_ids_buffer_and_gamma_beta_names_are_understood(tmp_path):
    base = mb.BertModel(tiny_config(), seed=2)
    tensors = {}
    for name, value in base.named_parameters():
        name = name.replace("LayerNorm.weight", "LayerNorm.gamma").replace(
            "LayerNorm.bias", "LayerNorm.beta")
        tensors[name] = value
    tensors["embeddings.position_ids"] = np.arange(24, dtype=np.int64)[None]
    folder = tmp_path / "old"
    folder.mkdir()
    safetensors.save_file(tensors, folder / "model.safetensors")
    base.config.to_json_file(folder / "config.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = mb.BertModel.from_pretrained(folder)
    np.testing.assert_array_equal(loaded.state_dict()["embeddings.LayerNorm.weight"],
                                  base.state_dict()["embeddings.LayerNorm.weight"])


def test_sharded_checkpoint(saved, tmp_path):
    model, folder = saved
    tensors = safetensors.load_file(folder / "model.safetensors", mmap=False)
    names = sorted(tensors)
    shard_dir = tmp_path / "sharded"
    shard_dir.mkdir()
    halves = {"model-00001-of-00002.safetensors": names[::2],
              "model-00002-of-00002.safetensors": names[1::2]}
    weight_map = {}
    for shard, keys in halves.items():
        safetensors.save_file({k: tensors[k] for k in keys}, shard_dir / shard)
        weight_map.update({k: shard for k in keys})
    (shard_dir / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    (shard_dir / "config.json").write_text((folder / "config.json").read_text())
    loaded = mb.BertForPreTraining.from_pretrained(shard_dir)
    for name, value in model.named_parameters():
        np.testing.assert_array_equal(dict(loaded.named_parameters())[name], value)


# -- refusals -----------------------------------------------------------------------------------

def test_missing_folder_and_missing_config(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mb.BertModel.from_pretrained(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        mb.BertModel.from_pretrained(tmp_path / "empty")


def test_pickle_only_checkpoint_is_refused_not_unpickled(tmp_path):
    folder = tmp_path / "torch"
    folder.mkdir()
    tiny_config().to_json_file(folder / "config.json")
    # Not a valid pickle at all: loading it would fail differently; refusing never reads it.
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04 this must never be unpickled")
    with pytest.raises(ValueError, match=r"pytorch_model.bin, a pickle-based format.*"
                                         r"safe_serialization=True"):
        mb.BertModel.from_pretrained(folder)


def test_shape_disagreeing_with_config(saved):
    _, folder = saved
    config = json.loads((folder / "config.json").read_text())
    config["intermediate_size"] = 40
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"'bert.encoder.layer.0.intermediate.dense.bias' has "
                                         r"shape \(32,\), but config.json implies \(40,\)"):
        mb.BertForPreTraining.from_pretrained(folder)


def test_missing_encoder_weight_is_an_error(saved):
    _, folder = saved
    tensors = safetensors.load_file(folder / "model.safetensors", mmap=False)
    del tensors["bert.encoder.layer.1.attention.self.key.bias"]
    safetensors.save_file(tensors, folder / "model.safetensors")
    with pytest.raises(ValueError,
                       match=r"lacks 1 encoder weights .*layer.1.attention.self.key.bias"):
        mb.BertForPreTraining.from_pretrained(folder)


@pytest.mark.parametrize("keep", [7, 100, -10])
def test_truncated_weights_file(saved, keep):
    _, folder = saved
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:keep])
    with pytest.raises(ValueError, match="model.safetensors"):
        mb.BertForPreTraining.from_pretrained(folder)


def test_save_into_a_file_path_is_refused(tmp_path):
    target = tmp_path / "file"
    target.write_text("keep me")
    with pytest.raises(NotADirectoryError):
        mb.BertModel(tiny_config()).save_pretrained(target)
    assert target.read_text() == "keep me"


# -- info ---------------------------------------------------------------------------------------

def test_summary_counts_match_the_model(saved):
    model, folder = saved
    summary = checkpoint_summary(folder)
    assert summary["total_parameters"] == model.num_parameters()
    assert summary["heads"] == ["cls.predictions", "cls.seq_relationship"]
    assert summary["pooler"] and summary["dtypes"] == ["F32"]


def test_info_cli(saved, tmp_path):
    _, folder = saved
    result = subprocess.run([sys.executable, "-m", "minibert", "info", str(folder)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "BertForPreTraining" in result.stdout and "encoder.layer.1" in result.stdout
    bad = subprocess.run([sys.executable, "-m", "minibert", "info", str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "does not exist" in bad.stderr


# -- unreadable or misplaced files --------------------------------------------------------------

def test_a_missing_model_folder_is_not_reported_as_a_missing_vocab(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"model folder .*nowhere' does not exist$"):
        load_tokenizer(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="has no vocab.txt; save the model"):
        load_tokenizer(tmp_path / "empty")


@pytest.mark.parametrize("load", [mb.BertForPreTraining.from_pretrained, load_tokenizer,
                                  checkpoint_summary])
def test_a_file_given_as_the_model_folder(tmp_path, load):
    target = tmp_path / "model.safetensors"
    target.write_bytes(b"not a folder")
    with pytest.raises(NotADirectoryError, match=r"model.safetensors' is a file; expected a "
                                                 r"folder holding config.json"):
        load(target)


def refuse_to_open(monkeypatch, name):
    """Make ``open`` raise PermissionError for files called ``name`` (the tests run as root,
    which chmod cannot lock out)."""
    real_open = open

    def guarded(file, *args, **kwargs):
        if Path(str(file)).name == name:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded)


@pytest.mark.parametrize("name, message", [
    ("model.safetensors", "safetensors file '.*model.safetensors' cannot be read: permission"),
    ("config.json", "config file '.*config.json' cannot be read: permission denied"),
])
def test_an_unreadable_file_is_named(saved, monkeypatch, name, message):
    _, folder = saved
    refuse_to_open(monkeypatch, name)
    with pytest.raises(PermissionError, match=message):
        mb.BertForPreTraining.from_pretrained(folder)


def test_an_unreadable_vocab_is_named(saved, monkeypatch):
    model, folder = saved
    model.save_pretrained(folder, tokenizer=mb.BertTokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]))
    refuse_to_open(monkeypatch, "vocab.txt")
    with pytest.raises(PermissionError, match="vocab file '.*vocab.txt' cannot be read"):
        load_tokenizer(folder)


def test_a_config_describing_a_huge_model_is_refused_before_allocating(saved):
    _, folder = saved
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 10**12
    (folder / "config.json").write_text(json.dumps(config))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"config.json' describes an encoder of "
                                             r"16,000,000,004,896 weights \(vocab_size="
                                             r"1,000,000,000,000.*does not belong to these"):
            mb.BertForPreTraining.from_pretrained(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_two_names_for_one_weight_are_refused(saved):
    _, folder = saved
    tensors = safetensors.load_file(folder / "model.safetensors", mmap=False)
    key = "bert.embeddings.LayerNorm.weight"
    tensors["bert.embeddings.LayerNorm.gamma"] = tensors[key] + 1
    safetensors.save_file(tensors, folder / "model.safetensors")
    with pytest.raises(ValueError, match=r"'bert.embeddings.LayerNorm.gamma' and "
                                         r"'bert.embeddings.LayerNorm.weight' both name"):
        mb.BertForPreTraining.from_pretrained(folder)


@pytest.mark.parametrize("index, message", [
    ({"weight_map": ["model.safetensors"]}, "'weight_map' must map tensor names"),
    ({"weight_map": {"a": "../elsewhere.safetensors"}}, "is not a plain file name"),
    ({"metadata": {}}, "with a 'weight_map'"),
    ([1, 2], "with a 'weight_map'"),
])
def test_a_malformed_shard_index_is_named(saved, index, message):
    _, folder = saved
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match=f"safetensors index .*index.json.*{message}"):
        mb.BertForPreTraining.from_pretrained(folder)


@pytest.mark.parametrize("settings, message", [
    ("[1]", "must hold a JSON object"),
    ('{"do_lower_case": "false"}', "do_lower_case must be true or false, got 'false'"),
    ("{", "is not valid UTF-8 JSON"),
])
def test_malformed_tokenizer_settings_are_named(saved, settings, message):
    model, folder = saved
    model.save_pretrained(folder, tokenizer=mb.BertTokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]))
    (folder / "tokenizer_config.json").write_text(settings)
    with pytest.raises(ValueError, match=f"tokenizer settings .*tokenizer_config.json.*{message}"):
        load_tokenizer(folder)
