"""Checkpoints as HuggingFace writes them: config.json + model.safetensors (+ vocab.txt).

``save_pretrained`` writes a folder that ``transformers`` opens with ``from_pretrained``;
``load_pretrained`` reads such a folder (ours, or a real BERT checkpoint) into any
minibert model class. Pickle-based checkpoints (``pytorch_model.bin``) are refused,
never unpickled. See docs/checkpoints.md.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np

from minibert import safetensors
from minibert.config import BertConfig
from minibert.fileio import atomic_write_json

__all__ = [
    "CONFIG_NAME",
    "WEIGHTS_NAME",
    "WEIGHTS_INDEX_NAME",
    "VOCAB_NAME",
    "save_pretrained",
    "load_pretrained",
    "read_checkpoint_tensors",
    "load_tokenizer",
    "checkpoint_summary",
]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
WEIGHTS_INDEX_NAME = "model.safetensors.index.json"  # sharded checkpoints
VOCAB_NAME = "vocab.txt"
TOKENIZER_CONFIG_NAME = "tokenizer_config.json"
PICKLE_CHECKPOINTS = (
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
    "tf_model.h5",
    "flax_model.msgpack",
    "model.ckpt.index",
)
# Buffers HF keeps in its state dict that are not parameters (recomputed here).
IGNORED_BUFFERS = re.compile(r"(^|\.)(position_ids|token_type_ids)$")
HEAD_PREFIXES = ("cls.", "classifier.", "qa_outputs.")

_CONVERT_HINT = (
    'convert it once with transformers: python -c "from transformers import AutoModel; '
    "AutoModel.from_pretrained('DIR').save_pretrained('DIR', safe_serialization=True)\""
)


def save_pretrained(model, directory: str | os.PathLike, tokenizer=None) -> Path:
    """Write ``config.json`` and ``model.safetensors`` (and ``vocab.txt`` given a tokenizer).

    Tied weights are stored once, under their canonical names (the decoder reuses
    ``bert.embeddings.word_embeddings.weight``), as HF does. Each file is written
    atomically. Returns the folder.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"directory {str(directory)!r} exists and is not a folder")
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {name: np.ascontiguousarray(value) for name, value in model.named_parameters()}
    # "format": "pt" is what transformers expects of a safetensors checkpoint's metadata.
    safetensors.save_file(tensors, directory / WEIGHTS_NAME, metadata={"format": "pt"})
    config = model.config.to_dict()
    config["architectures"] = [type(model).__name__]
    config["torch_dtype"] = str(np.dtype(model.dtype))
    atomic_write_json(directory / CONFIG_NAME, config)
    if tokenizer is not None:
        tokenizer.save_vocabulary(directory)
        atomic_write_json(
            directory / TOKENIZER_CONFIG_NAME,
            {
                "do_lower_case": bool(getattr(tokenizer, "do_lower_case", True)),
                "tokenizer_class": "BertTokenizer",
                "model_max_length": int(model.config.max_position_embeddings),
            },
        )
    return directory


def _check_folder(directory) -> Path:
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"checkpoint folder {str(directory)!r} does not exist")
    if not (directory / CONFIG_NAME).is_file():
        raise FileNotFoundError(
            f"checkpoint folder {str(directory)!r} has no {CONFIG_NAME}; "
            f"a BERT checkpoint needs config.json beside its weights"
        )
    return directory


def read_checkpoint_tensors(directory: str | os.PathLike, mmap: bool = True):
    """All tensors of a checkpoint folder (single or sharded safetensors), memory-mapped."""
    directory = _check_folder(directory)
    single, index = directory / WEIGHTS_NAME, directory / WEIGHTS_INDEX_NAME
    if single.is_file():
        return safetensors.load_file(single, mmap=mmap)
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{str(index)!r} is not a valid safetensors index: {error}") from None
        tensors = {}
        for shard in sorted(set(weight_map.values())):
            tensors.update(safetensors.load_file(directory / shard, mmap=mmap))
        return tensors
    pickled = [name for name in PICKLE_CHECKPOINTS if (directory / name).exists()]
    if pickled:
        raise ValueError(
            f"checkpoint folder {str(directory)!r} holds only {pickled[0]}, a "
            f"pickle-based format that minibert never loads (unpickling runs "
            f"arbitrary code); {_CONVERT_HINT.replace('DIR', str(directory))}"
        )
    raise FileNotFoundError(f"checkpoint folder {str(directory)!r} has no {WEIGHTS_NAME}")


def _normalize_key(key: str) -> str:
    # Checkpoints converted from Google's TF code name LayerNorm parameters gamma/beta.
    return re.sub(
        r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", key)
    )


def _map_to_model_keys(tensors: dict, model_keys: set[str]) -> dict:
    """Rename checkpoint keys to the model's: add or strip the "bert." prefix as needed."""
    wants_prefix = any(k.startswith("bert.") for k in model_keys)
    mapped = {}
    for key, value in tensors.items():
        key = _normalize_key(key)
        if IGNORED_BUFFERS.search(key):
            continue
        if wants_prefix and not key.startswith("bert.") and not key.startswith(HEAD_PREFIXES):
            key = "bert." + key
        elif not wants_prefix and key.startswith("bert."):
            key = key[len("bert.") :]
        mapped[key] = value
    return mapped


def load_pretrained(
    cls, directory: str | os.PathLike, dtype=np.float32, seed: int = 0, **model_kwargs
):
    """Build ``cls`` from a checkpoint folder; returns the model.

    The encoder (``bert.*``) must be complete and shaped as config.json says, or
    ValueError lists what is wrong. A head the checkpoint lacks (e.g. ``cls.*`` in a
    base ``BertModel`` checkpoint) keeps its seeded initialization and is named in a
    warning; weights the model has no place for are named in a warning and skipped.
    ``model.loading_info`` records missing and unexpected keys. The model is returned in
    eval mode, as HF does; call ``model.train()`` to fine-tune.
    """
    directory = _check_folder(directory)
    config = BertConfig.from_json_file(directory / CONFIG_NAME)
    tensors = read_checkpoint_tensors(directory)
    model = cls(config, seed=seed, dtype=dtype, **model_kwargs)
    aliases = model._tied_aliases()
    params = dict(model.named_parameters())
    incoming = _map_to_model_keys(tensors, set(params))
    for alias in aliases:
        incoming.pop(alias, None)  # the canonical array is loaded once
    missing = sorted(set(params) - set(incoming))
    unexpected = sorted(set(incoming) - set(params))
    missing_encoder = [k for k in missing if not k.startswith(HEAD_PREFIXES)]
    if missing_encoder:
        shown = ", ".join(missing_encoder[:8]) + (" ..." if len(missing_encoder) > 8 else "")
        raise ValueError(
            f"checkpoint {str(directory)!r} lacks {len(missing_encoder)} encoder "
            f"weights that {cls.__name__} needs: {shown}"
        )
    for key in sorted(set(incoming) & set(params)):
        shape = tuple(incoming[key].shape)
        if shape != params[key].shape:
            raise ValueError(
                f"checkpoint tensor {key!r} has shape {shape}, but config.json "
                f"implies {params[key].shape}"
            )
        if not np.issubdtype(incoming[key].dtype, np.floating):
            raise ValueError(
                f"checkpoint tensor {key!r} has dtype {incoming[key].dtype}; "
                f"weights must be floating point"
            )
    model.load_state_dict({k: v for k, v in incoming.items() if k in params}, strict=False)
    heads = sorted({".".join(k.split(".")[:2]) for k in missing})
    if missing:
        warnings.warn(
            f"{cls.__name__}: {len(missing)} weights not in the checkpoint were "
            f"initialized from seed {seed}: heads {heads}",
            stacklevel=3,
        )
    if unexpected:
        shown = ", ".join(unexpected[:8]) + (" ..." if len(unexpected) > 8 else "")
        warnings.warn(
            f"{cls.__name__}: ignored {len(unexpected)} checkpoint weights it has no "
            f"place for: {shown}",
            stacklevel=3,
        )
    object.__setattr__(
        model,
        "loading_info",
        {"missing_keys": missing, "unexpected_keys": unexpected, "initialized_heads": heads},
    )
    return model.eval()  # as HF: a loaded model starts in eval mode (dropout off)


def load_tokenizer(directory: str | os.PathLike):
    """The BertTokenizer of a checkpoint folder (its vocab.txt and tokenizer_config.json)."""
    from minibert.tokenization import BertTokenizer

    directory = Path(directory)
    vocab = directory / VOCAB_NAME
    if not vocab.is_file():
        raise FileNotFoundError(
            f"model folder {str(directory)!r} has no {VOCAB_NAME}; save "
            f"the model with save_pretrained(dir, tokenizer=...)"
        )
    do_lower_case = True
    settings = directory / TOKENIZER_CONFIG_NAME
    if settings.is_file():
        try:
            do_lower_case = bool(
                json.loads(settings.read_text(encoding="utf-8")).get("do_lower_case", True)
            )
        except ValueError as error:
            raise ValueError(f"{str(settings)!r} is not valid JSON: {error}") from None
    return BertTokenizer(vocab, do_lower_case=do_lower_case)


def checkpoint_summary(directory: str | os.PathLike) -> dict:
    """What ``minibert info`` prints: config, parameter counts by module, dtypes, heads.

    Reads only the safetensors header (no tensor data).
    """
    directory = _check_folder(directory)
    config = BertConfig.from_json_file(directory / CONFIG_NAME)
    if (directory / WEIGHTS_NAME).is_file():
        infos, _ = safetensors.read_header(directory / WEIGHTS_NAME)
    else:
        read_checkpoint_tensors(directory)  # raises the precise reason (pickle, missing)
        index = json.loads((directory / WEIGHTS_INDEX_NAME).read_text(encoding="utf-8"))
        infos = {}
        for shard in sorted(set(index["weight_map"].values())):
            infos.update(safetensors.read_header(directory / shard)[0])
    counts: dict[str, int] = {}
    dtypes: set[str] = set()
    for key, info in infos.items():
        key = _normalize_key(key)
        if IGNORED_BUFFERS.search(key):
            continue
        bare = key[len("bert.") :] if key.startswith("bert.") else key
        parts = bare.split(".")
        group = ".".join(parts[:3]) if parts[0] == "encoder" else ".".join(parts[:2])
        counts[group] = counts.get(group, 0) + int(np.prod(info.shape, dtype=np.int64))
        dtypes.add(info.dtype)
    heads = sorted(
        {k.split(".")[0] + "." + k.split(".")[1] for k in infos if k.startswith(HEAD_PREFIXES)}
    )
    has_pooler = any(".pooler." in f".{k}" for k in infos)
    return {
        "folder": str(directory),
        "config": config.to_dict(),
        "parameters": counts,
        "total_parameters": int(sum(counts.values())),
        "dtypes": sorted(dtypes),
        "heads": heads,
        "pooler": has_pooler,
        "vocab": (directory / VOCAB_NAME).is_file(),
    }
