"""Checkpoints as HuggingFace writes them: config.json + model.safetensors (+ the tokenizer).

``save_pretrained`` writes a folder that ``transformers`` opens with ``from_pretrained``;
``load_pretrained`` reads such a folder (ours, or a real BERT checkpoint) into any
minibert model class. The tokenizer files (vocab.txt, tokenizer_config.json) are the
tokenizer's own business: ``BertTokenizer.save_pretrained`` writes them and
``BertTokenizer.from_pretrained`` reads them, here too. Pickle-based checkpoints
(``pytorch_model.bin``) are refused, never unpickled. See docs/checkpoints.md.

This module sits below the models and imports none of them: a model class brings its
``config_class``; which class a folder's config.json belongs to is the family registry's
business (``minibert.family.registry.config_class_of``), and the tokenizer's folder is read
by ``minibert.tokenization.load_tokenizer``.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np

from minibert.io import safetensors
from minibert.io.fileio import atomic_write_json, existing_folder, read_json_object

__all__ = [
    "CONFIG_NAME",
    "WEIGHTS_NAME",
    "WEIGHTS_INDEX_NAME",
    "VOCAB_NAME",
    "save_pretrained",
    "load_pretrained",
    "read_checkpoint_tensors",
    "checkpoint_summary",
    "ConfigMismatch",
    "config_mismatches",
    "partial_loading",
]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
WEIGHTS_INDEX_NAME = "model.safetensors.index.json"  # sharded checkpoints
VOCAB_NAME = "vocab.txt"
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
# An untied MLM decoder (config.json "tie_word_embeddings": false) has its own weight, and
# transformers 5 unties its bias too: it computes with cls.predictions.decoder.bias and
# leaves cls.predictions.bias unused (transformers 4 saved the two equal). minibert keeps
# one bias, cls.predictions.bias: read from the decoder's key, written under both.
UNTIED_DECODER = "cls.predictions.decoder.weight"
DECODER_BIAS, HEAD_BIAS = "cls.predictions.decoder.bias", "cls.predictions.bias"

def _convert_hint(directory: Path) -> str:
    """The command that converts a pickle-only folder to safetensors, keeping every head:
    the class config.json's "architectures" names (AutoModel would drop the heads)."""
    try:
        architectures = read_json_object(directory / CONFIG_NAME, "config file").get(
            "architectures")
    except (OSError, ValueError):
        architectures = None
    name = architectures[0] if isinstance(architectures, list) and architectures and \
        isinstance(architectures[0], str) and architectures[0].isidentifier() else None
    loader = f"transformers.{name}" if name else "transformers.AutoModel"
    where = repr(str(directory))
    return (f'convert it once with transformers: python -c "import transformers; '
            f'{loader}.from_pretrained({where}).save_pretrained({where}, '
            f'safe_serialization=True)"'
            + ("" if name else " (config.json names no architecture: AutoModel keeps the "
                               "encoder only; name the class with its heads instead)"))


def save_pretrained(model, directory: str | os.PathLike, tokenizer=None) -> Path:
    """Write ``config.json`` and ``model.safetensors``, and the tokenizer's files if given.

    Tied weights are stored once, under their canonical names (the decoder reuses
    ``bert.embeddings.word_embeddings.weight``), as HF does. A tokenizer is written by its
    own ``save_pretrained`` (vocab.txt and tokenizer_config.json with all its settings),
    with one change: a ``model_max_length`` above the model's ``max_position_embeddings``
    is written as ``max_position_embeddings``, the longest input the model beside it reads.
    Each file is written atomically. Returns the folder.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"directory {str(directory)!r} exists and is not a folder")
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {name: np.ascontiguousarray(value) for name, value in model.named_parameters()}
    if UNTIED_DECODER in tensors and HEAD_BIAS in tensors:
        tensors[DECODER_BIAS] = tensors[HEAD_BIAS]
    # "format": "pt" is what transformers expects of a safetensors checkpoint's metadata.
    safetensors.save_file(tensors, directory / WEIGHTS_NAME, metadata={"format": "pt"})
    config = model.config.to_dict()
    config["architectures"] = [type(model).__name__]
    config["torch_dtype"] = str(np.dtype(model.dtype))
    atomic_write_json(directory / CONFIG_NAME, config)
    if tokenizer is not None:
        tokenizer.save_pretrained(directory, model_max_length=min(
            tokenizer.model_max_length, model.config.max_position_embeddings))
    return directory


def _check_folder(directory) -> Path:
    directory = existing_folder(directory, "checkpoint folder")
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
        tensors = {}
        for shard in _index_shards(index):
            tensors.update(safetensors.load_file(directory / shard, mmap=mmap))
        return tensors
    pickled = [name for name in PICKLE_CHECKPOINTS if (directory / name).exists()]
    if pickled:
        raise ValueError(
            f"checkpoint folder {str(directory)!r} holds only {pickled[0]}, a "
            f"pickle-based format that minibert never loads (unpickling runs "
            f"arbitrary code); {_convert_hint(directory)}"
        )
    raise FileNotFoundError(f"checkpoint folder {str(directory)!r} has no {WEIGHTS_NAME}")


def _index_shards(index: Path) -> list[str]:
    """The shard file names a ``model.safetensors.index.json`` lists, sorted, checked."""
    where = f"safetensors index {str(index)!r}"
    with safetensors.open_to_read(index, "safetensors index") as handle:
        raw = handle.read()
    try:
        weight_map = json.loads(raw.decode("utf-8"))["weight_map"]
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        reason = f"no {error}" if isinstance(error, KeyError) else type(error).__name__
        raise ValueError(f"{where} is not a JSON object with a 'weight_map' ({reason})") from None
    if not isinstance(weight_map, dict) or not all(
            isinstance(shard, str) for shard in weight_map.values()):
        raise ValueError(f"{where}: 'weight_map' must map tensor names to shard file names")
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        # Shards sit beside the index: a path elsewhere would read files outside the folder.
        if shard in ("", ".", "..") or Path(shard).name != shard or "\\" in shard:
            raise ValueError(f"{where}: shard {shard[:80]!r} is not a plain file name")
    return shards


def _normalize_key(key: str) -> str:
    # Checkpoints converted from Google's TF code name LayerNorm parameters gamma/beta.
    return re.sub(
        r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", key)
    )


def _map_to_model_keys(tensors: dict, model_keys: set[str], prefix: str = "bert",
                       head_prefixes: tuple = HEAD_PREFIXES) -> dict:
    """Rename checkpoint keys to the model's: add or strip the base-model prefix as needed.

    ``prefix`` is the base model's attribute ("bert" for BERT, "albert", "distilbert");
    keys under ``head_prefixes`` belong to heads and never take it.
    """
    base = prefix + "."
    wants_prefix = any(k.startswith(base) for k in model_keys)
    mapped, origin = {}, {}
    for original, value in tensors.items():
        key = _normalize_key(original)
        if IGNORED_BUFFERS.search(key):
            continue
        if wants_prefix and not key.startswith(base) and not key.startswith(head_prefixes):
            key = base + key
        elif not wants_prefix and key.startswith(base):
            key = key[len(base) :]
        if key in mapped:
            # e.g. "bert.x" and "x", or "LayerNorm.gamma" and "LayerNorm.weight": which one
            # was meant cannot be told, and silently keeping one would hide the other.
            raise ValueError(
                f"checkpoint tensors {origin[key]!r} and {original!r} both name the weight "
                f"{key!r}; a checkpoint must hold each weight once"
            )
        mapped[key], origin[key] = value, original
    return mapped


def _check_size_against_config(config, tensors: dict, directory: Path) -> None:
    """Refuse a config.json that describes a bigger encoder than the weights hold.

    Checked before the model is built: a corrupt config.json (vocab_size=10**12, say)
    must not allocate its model first. The pooler is left out because some checkpoints
    lack it; every other encoder weight must be in the file, so a matching config can
    never ask for more numbers than the file holds.
    """
    needed = config.required_checkpoint_numbers()
    stored = sum(int(np.prod(value.shape, dtype=np.int64)) for value in tensors.values())
    if needed > stored:
        sizes = ", ".join(f"{name}={_count(getattr(config, name))}" for name in config.SIZE_FIELDS)
        raise ValueError(
            f"{str(directory / CONFIG_NAME)!r} describes an encoder of {_count(needed)} weights "
            f"({sizes}), but the checkpoint's weights hold {stored:,} numbers in all: "
            "config.json does not belong to these weights"
        )


# Keys of encoder blocks, after the base-model prefix: BERT, ELECTRA (encoder.layer.N),
# DistilBERT (transformer.layer.N), ALBERT (its groups, and the layers inside a group).
_BLOCK_KEYS = (
    (re.compile(r"^(?:encoder|transformer)\.layer\.(\d+)\."), "num_hidden_layers",
     "layers"),
    (re.compile(r"^encoder\.albert_layer_groups\.(\d+)\."), "num_hidden_groups",
     "layer groups"),
    (re.compile(r"^encoder\.albert_layer_groups\.\d+\.albert_layers\.(\d+)\."),
     "inner_group_num", "layers per group"),
)
_BASE_PREFIX = re.compile(r"^(?:bert|albert|distilbert|electra)\.")


class ConfigMismatch(ValueError):
    """config.json describes other shapes than the weights beside it hold.

    ``mismatches`` lists each disagreement in words; ``partial`` is True when loading only
    what config.json describes would work (the weights hold more blocks than it names), the
    case ``strict=False`` allows.
    """

    def __init__(self, directory, mismatches: list[str], partial: bool) -> None:
        self.directory, self.mismatches, self.partial = str(directory), mismatches, partial
        super().__init__(self.reason() + (
            "; pass strict=False to load only what config.json describes" if partial else ""))

    def reason(self) -> str:
        """The disagreement, without the advice on how to load anyway: the first two
        mismatches in words and how many more there are (``mismatches`` holds them all;
        ``minibert info`` prints them all), so that the message stays one short line."""
        shown, more = self.mismatches[:2], len(self.mismatches) - 2
        return (f"config.json of {self.directory!r} says " + "; and ".join(shown)
                + (f"; and {more} more (minibert info lists them)" if more > 0 else "")
                + ": it does not describe these weights")


def config_mismatches(config: dict, shapes: dict) -> tuple[list[str], bool]:
    """Where a config.json (as a dict) disagrees with the tensor ``shapes`` of its weights.

    Compares the block counts (num_hidden_layers, ALBERT's groups) with the block indices
    in the tensor names, and the table sizes (vocab_size, the embedding width,
    max_position_embeddings, type_vocab_size, intermediate_size) with the shapes of the
    tables that hold them. Returns (one sentence per disagreement, whether the weights
    only hold more blocks than config.json names: the one case a partial load can serve).
    Reads names and shapes only, so it costs nothing for any size of checkpoint.
    """
    bare = {_BASE_PREFIX.sub("", _normalize_key(key)): tuple(shape)
            for key, shape in shapes.items()}
    found, only_more_blocks = [], True
    for pattern, field, what in _BLOCK_KEYS:
        indices = {int(m.group(1)) for key in bare if (m := pattern.match(key))}
        wanted = config.get(field, config.get("n_layers") if field == "num_hidden_layers"
                            else None)
        if not indices or not isinstance(wanted, int) or \
                (field == "num_hidden_layers" and "num_hidden_groups" in config):
            continue  # ALBERT's layers share the blocks of its groups
        stored = max(indices) + 1
        if stored != wanted:
            found.append(f"{field} {_count(wanted)}, but the weights hold {stored} {what} "
                         f"(numbered {min(indices)} to {max(indices)})")
            only_more_blocks = only_more_blocks and stored > wanted
    width_field = "embedding_size" if "embedding_size" in config else \
        "dim" if "dim" in config else "hidden_size"
    intermediate_field = "hidden_dim" if "hidden_dim" in config else "intermediate_size"
    tables = (  # (config field, tensor name ending, axis of the shape that holds it)
        ("vocab_size", "embeddings.word_embeddings.weight", 0),
        (width_field, "embeddings.word_embeddings.weight", 1),
        ("max_position_embeddings", "embeddings.position_embeddings.weight", 0),
        ("type_vocab_size", "embeddings.token_type_embeddings.weight", 0),
        (intermediate_field, ".0.intermediate.dense.weight", 0),
        (intermediate_field, ".0.ffn.lin1.weight", 0),
        (intermediate_field, ".0.ffn.weight", 0),
    )
    for field, ending, axis in tables:
        wanted = config.get(field)
        shape = next((shape for key, shape in sorted(bare.items()) if key.endswith(ending)),
                     None)
        if not isinstance(wanted, int) or shape is None or len(shape) <= axis:
            continue
        if shape[axis] != wanted:
            found.append(f"{field} {_count(wanted)}, but the weights' {ending.lstrip('.0')} "
                         f"has {shape[axis]:,} {'rows' if axis == 0 else 'columns'}")
            only_more_blocks = False
    return found, bool(found) and only_more_blocks


# The default of load_pretrained's ``strict``: ``partial_loading()`` turns it off for a block.
_STRICT_LOADING = contextvars.ContextVar("strict_loading", default=True)


@contextlib.contextmanager
def partial_loading(allowed: bool = True):
    """Within the block, ``from_pretrained`` loads as with ``strict=False`` (when
    ``allowed``): for a command whose loader is not called directly (``--allow-partial``)."""
    token = _STRICT_LOADING.set(not allowed)
    try:
        yield
    finally:
        _STRICT_LOADING.reset(token)


def _check_finite(key: str, value, directory: Path, strict: bool) -> None:
    """Refuse (strict) or name in a warning a tensor holding NaN or infinite numbers."""
    finite = np.isfinite(value)
    if finite.all():
        return
    bad = int(finite.size - np.count_nonzero(finite))
    message = (f"checkpoint {str(directory)!r}: tensor {key!r} holds {bad:,} NaN or "
               f"infinite numbers (of {finite.size:,}); such weights give NaN answers "
               f"(saved from a diverged run?)")
    if strict:
        raise ValueError(message + "; retrain, or resume from an earlier checkpoint")
    warnings.warn(message, stacklevel=4)


def _count(value: int) -> str:
    # A corrupt config.json can hold a number of hundreds of digits; keep the message short.
    return f"{value:,}" if value < 10**15 else f"about 10^{len(str(value)) - 1}"


def load_pretrained(
    cls, directory: str | os.PathLike, dtype=np.float32, seed: int = 0, *,
    strict: bool | None = None, **model_kwargs
):
    """Build ``cls`` from a checkpoint folder; returns the model.

    The encoder (``bert.*``) must be complete and shaped as config.json says, or
    ValueError lists what is wrong. A head the checkpoint lacks (e.g. ``cls.*`` in a
    base ``BertModel`` checkpoint) keeps its seeded initialization and is named in a
    warning; head weights the model has no place for are named in a warning and skipped.
    ``model.loading_info`` records missing and unexpected keys. The model is returned in
    eval mode, as HF does; call ``model.train()`` to fine-tune.

    ``strict`` (default True, or False inside ``partial_loading()``): a config.json that
    disagrees with the weights' shapes (more or fewer layers, other sizes) raises
    ConfigMismatch naming both, and a tensor holding NaN or infinity raises ValueError.
    ``strict=False`` loads the blocks config.json describes and skips the others with a
    warning, and only warns about non-finite weights.
    """
    strict = _STRICT_LOADING.get() if strict is None else bool(strict)
    directory = _check_folder(directory)
    config = cls.config_class.from_json_file(directory / CONFIG_NAME)
    tensors = read_checkpoint_tensors(directory)
    if strict:
        found, partial = config_mismatches(config.to_dict(), {
            key: value.shape for key, value in tensors.items()})
        if found:
            raise ConfigMismatch(directory, found, partial)
    _check_size_against_config(config, tensors, directory)
    model = cls(config, seed=seed, dtype=dtype, **model_kwargs)
    aliases = model._tied_aliases()
    params = dict(model.named_parameters())
    head_prefixes = cls.head_prefixes
    incoming = _map_to_model_keys(tensors, set(params), cls.base_model_prefix, head_prefixes)
    if UNTIED_DECODER in params and DECODER_BIAS in incoming:
        incoming[HEAD_BIAS] = incoming.pop(DECODER_BIAS)  # the bias the untied decoder adds
    for alias in aliases:
        incoming.pop(alias, None)  # the canonical array is loaded once
    missing = sorted(set(params) - set(incoming))
    unexpected = sorted(set(incoming) - set(params))
    missing_encoder = [k for k in missing if not k.startswith(head_prefixes)]
    if missing_encoder:
        shown = ", ".join(missing_encoder[:4]) + (" ..." if len(missing_encoder) > 4 else "")
        raise ValueError(
            f"checkpoint {str(directory)!r} lacks {len(missing_encoder)} encoder "
            f"weights that {cls.__name__} needs: {shown}"
        )
    for key in sorted(set(incoming) & set(params)):
        shape = tuple(incoming[key].shape)
        if shape != params[key].shape:
            raise ValueError(
                f"checkpoint {str(directory)!r}: tensor {key!r} has shape {shape}, but "
                f"config.json implies {params[key].shape}"
            )
        if not np.issubdtype(incoming[key].dtype, np.floating):
            raise ValueError(
                f"checkpoint {str(directory)!r}: tensor {key!r} has dtype "
                f"{incoming[key].dtype}; weights must be floating point"
            )
        _check_finite(key, incoming[key], directory, strict)
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


def checkpoint_summary(directory: str | os.PathLike, config_class=None) -> dict:
    """What ``minibert info`` prints: config, parameter counts by module, dtypes, heads, and
    where config.json disagrees with the weights (``mismatches``, see ``config_mismatches``).

    Reads only the safetensors header (no tensor data). With ``config_class`` (e.g.
    ``minibert.family.registry.config_class_of(directory)``) config.json is read and checked
    by that class; without, its JSON object is reported as written.
    """
    directory = _check_folder(directory)
    if config_class is None:
        config = read_json_object(directory / CONFIG_NAME, "config file")
    else:
        config = config_class.from_json_file(directory / CONFIG_NAME).to_dict()
    if (directory / WEIGHTS_NAME).is_file():
        infos, _ = safetensors.read_header(directory / WEIGHTS_NAME)
    else:
        read_checkpoint_tensors(directory)  # raises the precise reason (pickle, missing)
        infos = {}
        for shard in _index_shards(directory / WEIGHTS_INDEX_NAME):
            infos.update(safetensors.read_header(directory / shard)[0])
    counts: dict[str, int] = {}
    dtypes: set[str] = set()
    for key, info in infos.items():
        key = _normalize_key(key)
        if IGNORED_BUFFERS.search(key):
            continue
        bare = re.sub(r"^(bert|albert|distilbert|electra)\.", "", key)
        parts = bare.split(".")
        # encoder.layer.0, ...; ALBERT's encoder.embedding_hidden_mapping_in is one module
        depth = 3 if parts[0] in ("encoder", "transformer") and \
            parts[1] != "embedding_hidden_mapping_in" else 2
        group = ".".join(parts[:depth])
        counts[group] = counts.get(group, 0) + int(np.prod(info.shape, dtype=np.int64))
        dtypes.add(info.dtype)
    heads = sorted(
        {k.split(".")[0] + "." + k.split(".")[1] for k in infos if k.startswith(HEAD_PREFIXES)}
        # DistilBERT's MLM head: vocab_transform, vocab_layer_norm, vocab_projector
        | {k.split(".")[0] for k in infos if k.startswith("vocab_")}
        # ALBERT's heads: predictions (MLM), sop_classifier (sentence order)
        | {k.split(".")[0] for k in infos if k.startswith(("predictions.", "sop_classifier."))}
        # ELECTRA's: the discriminator's replaced-token detector, the generator's MLM head
        | {k.split(".")[0] for k in infos if k.startswith(("discriminator_predictions.",
                                                            "generator_predictions.",
                                                            "generator_lm_head."))}
    )
    has_pooler = any(".pooler." in f".{k}" for k in infos)
    mismatches, _ = config_mismatches(config, {k: i.shape for k, i in infos.items()})
    return {
        "folder": str(directory),
        "config": config,
        "parameters": counts,
        "total_parameters": int(sum(counts.values())),
        "dtypes": sorted(dtypes),
        "heads": heads,
        "pooler": has_pooler,
        "vocab": (directory / VOCAB_NAME).is_file(),
        "mismatches": mismatches,
    }
