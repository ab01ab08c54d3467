"""Every checkpoint variant ``transformers`` saves loads into minibert as it is, or is refused.

Each case builds a tiny model with ``transformers``, moves its weights off their
initialization, saves it with ``save_pretrained`` (safetensors, the dtype of the case),
and reads the folder back twice: with ``transformers`` (float32) and with minibert. The
outputs must agree; a variant minibert does not implement must be refused by
``from_pretrained`` in one line that names the config key. Never a third outcome: a
model that loads and computes something else.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minibert as mb

TINY = dict(vocab_size=61, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=24, max_position_embeddings=20)
IDS = np.array([[2, 5, 7, 9, 11, 13, 3], [2, 17, 19, 23, 3, 0, 0]])
MASK = (IDS != 0).astype(np.int64)
SEGMENTS = np.array([[0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 0, 0]])

# name: (transformers class, minibert class, config overrides, torch dtype name)
LOADED = {
    "tied": ("BertForMaskedLM", mb.BertForMaskedLM, {}, "float32"),
    "untied": ("BertForMaskedLM", mb.BertForMaskedLM, {"tie_word_embeddings": False},
               "float32"),
    "untied-pretraining": ("BertForPreTraining", mb.BertForPreTraining,
                           {"tie_word_embeddings": False}, "float32"),
    "fp16": ("BertForMaskedLM", mb.BertForMaskedLM, {}, "float16"),
    "bf16": ("BertForMaskedLM", mb.BertForMaskedLM, {}, "bfloat16"),
    "untied-bf16": ("BertForMaskedLM", mb.BertForMaskedLM, {"tie_word_embeddings": False},
                    "bfloat16"),
    "gelu": ("BertForMaskedLM", mb.BertForMaskedLM, {"hidden_act": "gelu"}, "float32"),
    "gelu_new": ("BertForMaskedLM", mb.BertForMaskedLM, {"hidden_act": "gelu_new"}, "float32"),
    "gelu_pytorch_tanh": ("BertForMaskedLM", mb.BertForMaskedLM,
                          {"hidden_act": "gelu_pytorch_tanh"}, "float32"),
    "relu": ("BertForMaskedLM", mb.BertForMaskedLM, {"hidden_act": "relu"}, "float32"),
    "type-vocab-1": ("BertModel", mb.BertModel, {"type_vocab_size": 1}, "float32"),
    "bert-model": ("BertModel", mb.BertModel, {}, "float32"),
    "pretraining": ("BertForPreTraining", mb.BertForPreTraining, {}, "float32"),
    "layer-norm-eps": ("BertForMaskedLM", mb.BertForMaskedLM, {"layer_norm_eps": 1e-5},
                       "float32"),
    "distilbert": ("DistilBertForMaskedLM", mb.DistilBertForMaskedLM, {}, "float32"),
    "albert": ("AlbertForMaskedLM", mb.AlbertForMaskedLM, {"embedding_size": 8}, "float32"),
}

# name: (transformers class, minibert class, config overrides, the key the refusal names)
REFUSED = {
    "silu": ("BertForMaskedLM", mb.BertForMaskedLM, {"hidden_act": "silu"}, "hidden_act"),
    "relative-positions": ("BertModel", mb.BertModel,
                           {"position_embedding_type": "relative_key"},
                           "position_embedding_type"),
    "decoder": ("BertForMaskedLM", mb.BertForMaskedLM, {"is_decoder": True}, "is_decoder"),
    "cross-attention": ("BertModel", mb.BertModel,
                        {"is_decoder": True, "add_cross_attention": True}, "is_decoder"),
    "albert-untied": ("AlbertForMaskedLM", mb.AlbertForMaskedLM,
                      {"embedding_size": 8, "tie_word_embeddings": False},
                      "tie_word_embeddings"),
    "distilbert-untied": ("DistilBertForMaskedLM", mb.DistilBertForMaskedLM,
                          {"tie_word_embeddings": False}, "tie_word_embeddings"),
    "regression": ("BertForSequenceClassification", mb.BertForSequenceClassification,
                   {"problem_type": "regression", "num_labels": 1}, "problem_type"),
}


def _hf_config(hf, class_name: str, overrides: dict):
    if class_name.startswith("DistilBert"):
        fields = dict(vocab_size=TINY["vocab_size"], dim=TINY["hidden_size"],
                      n_layers=TINY["num_hidden_layers"], n_heads=TINY["num_attention_heads"],
                      hidden_dim=TINY["intermediate_size"],
                      max_position_embeddings=TINY["max_position_embeddings"])
        return hf.transformers.DistilBertConfig(**fields, **overrides)
    config_class = hf.transformers.AlbertConfig if class_name.startswith("Albert") \
        else hf.transformers.BertConfig
    return config_class(**TINY, **overrides)


def _saved(hf, tmp_path, class_name: str, overrides: dict, dtype: str = "float32"):
    """A folder written by transformers' save_pretrained, weights off their initialization."""
    torch = hf.torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = getattr(hf.transformers, class_name)(_hf_config(hf, class_name, overrides))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(torch.randn_like(parameter) * 0.2)
    model = model.to(getattr(torch, dtype))
    folder = tmp_path / "checkpoint"
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def _theirs(hf, class_name: str, folder):
    """transformers' outputs of the saved folder, in float32."""
    torch = hf.torch
    model = getattr(hf.transformers, class_name).from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager").eval()
    kwargs = dict(input_ids=torch.from_numpy(IDS), attention_mask=torch.from_numpy(MASK))
    if not class_name.startswith("DistilBert"):
        segments = SEGMENTS if model.config.type_vocab_size > 1 else np.zeros_like(SEGMENTS)
        kwargs["token_type_ids"] = torch.from_numpy(segments)
    with torch.no_grad():
        out = model(**kwargs)
    names = ("last_hidden_state", "logits", "prediction_logits", "seq_relationship_logits")
    return {name: getattr(out, name).numpy() for name in names if hasattr(out, name)
            and getattr(out, name) is not None}


def _ours(cls, folder, distil: bool) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a head the checkpoint lacks is named in a warning
        model = cls.from_pretrained(folder, dtype=np.float64)
    if distil:
        out = model(IDS, attention_mask=MASK)
    else:
        segments = SEGMENTS if model.config.type_vocab_size > 1 else np.zeros_like(SEGMENTS)
        out = model(IDS, token_type_ids=segments, attention_mask=MASK)
    results = {}
    for name in ("last_hidden_state", "logits", "prediction_logits", "seq_relationship_logits"):
        value = getattr(out, name, None)
        if value is not None:
            results[name] = np.asarray(value)
    return results


@pytest.mark.parametrize("case", sorted(LOADED))
def test_variant_loads_as_transformers_computes_it(hf, tmp_path, case):
    class_name, cls, overrides, dtype = LOADED[case]
    folder = _saved(hf, tmp_path, class_name, overrides, dtype)
    theirs = _theirs(hf, class_name, folder)
    ours = _ours(cls, folder, class_name.startswith("DistilBert"))
    compared = set(theirs) & set(ours)
    assert compared, f"{case}: no output to compare ({sorted(theirs)} vs {sorted(ours)})"
    real = MASK.astype(bool)
    for name in sorted(compared):
        mine, reference = ours[name], theirs[name]
        if mine.ndim == 3:  # padded positions carry no meaning in either model
            mine, reference = mine[real], reference[real]
        scale = np.abs(reference).max()
        error = np.abs(mine - reference).max()
        assert error < 1e-4 * max(scale, 1.0), f"{case} {name}: max diff {error:.3g} " \
                                               f"(scale {scale:.3g})"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_variant_minibert_cannot_compute_is_refused_in_one_line(hf, tmp_path, case):
    class_name, cls, overrides, key = REFUSED[case]
    folder = _saved(hf, tmp_path, class_name, overrides)
    with pytest.raises(ValueError) as caught:
        cls.from_pretrained(folder)
    message = str(caught.value)
    assert "\n" not in message and key in message, message


def test_untied_decoder_round_trips_through_minibert(hf, tmp_path):
    """minibert saves an untied model with its own decoder weight; transformers reads it."""
    folder = _saved(hf, tmp_path, "BertForMaskedLM", {"tie_word_embeddings": False})
    model = mb.BertForMaskedLM.from_pretrained(folder)
    names = dict(model.named_parameters())
    assert "cls.predictions.decoder.weight" in names
    assert not np.shares_memory(names["cls.predictions.decoder.weight"],
                                names["bert.embeddings.word_embeddings.weight"])
    again = tmp_path / "again"
    model.save_pretrained(again)
    theirs = _theirs(hf, "BertForMaskedLM", again)["logits"]
    ours = np.asarray(model(IDS, token_type_ids=SEGMENTS, attention_mask=MASK).logits)
    real = MASK.astype(bool)
    assert np.abs(ours[real] - theirs[real]).max() < 1e-4 * np.abs(theirs).max()


def test_pickle_only_folder_conversion_keeps_every_head(hf, tmp_path):
    """The command the refusal of a pytorch_model.bin folder suggests keeps the MLM and NSP
    heads: the model it writes loads with nothing drawn from a seed."""
    import shlex
    import subprocess
    import sys

    torch = hf.torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = hf.transformers.BertForPreTraining(_hf_config(hf, "BertForPreTraining", {}))
    folder = tmp_path / "pickled"
    model.save_pretrained(folder, safe_serialization=True)
    state = {name: torch.from_numpy(np.array(value)) for name, value in
             mb.io.safetensors.load_file(folder / "model.safetensors").items()}
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin")
    with pytest.raises(ValueError) as caught:
        mb.BertForPreTraining.from_pretrained(folder)
    message = str(caught.value)
    assert "transformers.BertForPreTraining.from_pretrained" in message, message
    command = message.split("convert it once with transformers: ", 1)[1]
    argv = shlex.split(command)
    assert argv[:2] == ["python", "-c"], command
    subprocess.run([sys.executable, "-c", argv[2]], check=True, capture_output=True,
                   timeout=300)
    converted = mb.BertForPreTraining.from_pretrained(folder)
    assert converted.loading_info["missing_keys"] == []


def test_transformers_5_tokenizer_folder_without_vocab_txt(hf, tmp_path):
    """transformers 5 saves tokenizer.json and no vocab.txt: minibert reads its WordPiece
    vocabulary and settings and splits text as transformers does."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s", "sat", "on",
             "mat", "##ted", "é"]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n", encoding="utf-8")
    folder = tmp_path / "saved"
    theirs = hf.transformers.BertTokenizer(str(vocab), do_lower_case=True)
    theirs.save_pretrained(folder)
    assert not (folder / "vocab.txt").exists() and (folder / "tokenizer.json").exists()
    ours = mb.BertTokenizer.from_pretrained(folder)
    for text in ("The cats sat on the matted mat", "THE CAT", "unknown words é É"):
        assert ours(text)["input_ids"] == theirs(text)["input_ids"], text
