"""Write tests/parity/reference_float64.safetensors: transformers' numbers for tiny models.

The file lets the default test suite compare minibert with HuggingFace ``transformers``
where torch is not installed (tests/core/test_numpy_parity.py, NumPy only), as llm.c's
test_gpt2 compares its C code with a file PyTorch wrote. For each of tiny BERT
(BertForPreTraining), ALBERT (AlbertForPreTraining) and DistilBERT (DistilBertForMaskedLM)
it stores, in float64:

- ``{family}.param.{name}``: every parameter, seeded and moved off its initialization
  (normal noise on each, LayerNorm included: weights at 0 or 1 can hide a missing term);
- ``{family}.input.{name}``: a padded batch with MLM labels (and the NSP or SOP labels);
- ``{family}.logits.mlm`` (B, T, V), ``{family}.logits.pair`` (B, 2) and ``{family}.loss``;
- ``{family}.grad.{name}``: torch autograd's gradient of the loss for every parameter;
- ``{family}.train_losses`` (10,): the loss before each of 10 AdamW steps on that batch
  (lr 1e-3, weight decay 0.01 except LayerNorm weights and biases, clipping at norm 1).

The metadata holds each family's config.json (``{family}.config``). Run from the
repository's root with torch and transformers installed (the parity extra):

    python tests/parity/make_reference.py

Dimension legend: B batch, T sequence length, V vocabulary size.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
import transformers

import minibert as mb
from minibert.checks import IGNORE_INDEX
from minibert.io import safetensors
from minibert.training.optim import no_weight_decay

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared helpers
from small_models import twin_of  # noqa: E402

HF = SimpleNamespace(torch=torch, transformers=transformers)

OUT = Path(__file__).resolve().parent / "reference_float64.safetensors"
SIZES = dict(vocab_size=40, num_attention_heads=2, max_position_embeddings=12)
BATCH, SEQ_LEN, STEPS, LR, WEIGHT_DECAY, MAX_NORM = 3, 8, 10, 1e-3, 0.01, 1.0


def families() -> dict:
    """family -> (minibert class, HF class, minibert config, the pair-label argument)."""
    dropout_off = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    bert = mb.BertConfig(hidden_size=16, num_hidden_layers=2, intermediate_size=24,
                         **SIZES, **dropout_off)
    albert = mb.AlbertConfig(embedding_size=8, hidden_size=16, num_hidden_layers=2,
                             intermediate_size=24, classifier_dropout_prob=0.0,
                             **SIZES, **dropout_off)
    distilbert = mb.DistilBertConfig(dim=16, n_layers=2, hidden_dim=24, dropout=0.0,
                                     attention_dropout=0.0, vocab_size=40, n_heads=2,
                                     max_position_embeddings=12)
    return {
        "bert": (mb.BertForPreTraining, transformers.BertForPreTraining, bert,
                 "next_sentence_label"),
        "albert": (mb.AlbertForPreTraining, transformers.AlbertForPreTraining, albert,
                   "sentence_order_label"),
        "distilbert": (mb.DistilBertForMaskedLM, transformers.DistilBertForMaskedLM,
                       distilbert, None),
    }


def batch_for(family: str, config, pair_label: str | None, rng) -> dict:
    """A padded batch: the second row has 3 padding positions, every row 2+ MLM targets."""
    input_ids = rng.integers(1, config.vocab_size, size=(BATCH, SEQ_LEN))
    attention_mask = np.ones((BATCH, SEQ_LEN), dtype=np.int64)
    attention_mask[1, -3:] = 0
    input_ids[attention_mask == 0] = 0
    labels = np.full((BATCH, SEQ_LEN), IGNORE_INDEX)
    labels[:, 1] = input_ids[:, 1]
    labels[:, 3] = rng.integers(1, config.vocab_size, size=BATCH)
    batch = {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}
    if family != "distilbert":
        token_type_ids = np.zeros((BATCH, SEQ_LEN), dtype=np.int64)
        token_type_ids[:, SEQ_LEN // 2:] = 1
        batch["token_type_ids"] = token_type_ids
    if pair_label is not None:
        batch[pair_label] = np.array([0, 1, 1])
    return batch


def outputs(family: str, out) -> dict:
    logits = out.logits if family == "distilbert" else out.prediction_logits
    tensors = {"logits.mlm": logits, "loss": out.loss.reshape(1)}
    if family == "bert":
        tensors["logits.pair"] = out.seq_relationship_logits
    elif family == "albert":
        tensors["logits.pair"] = out.sop_logits
    return {k: v.detach().numpy().copy() for k, v in tensors.items()}


def train_losses(twin, names: list[str], batch: dict) -> np.ndarray:
    """The loss before each of STEPS AdamW steps with clipping, the batch the same each time."""
    params = dict(twin.named_parameters())
    decay = [params[n] for n in names if not no_weight_decay(n)]
    no_decay = [params[n] for n in names if no_weight_decay(n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=LR)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = twin(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_([params[n] for n in names], MAX_NORM)
        optimizer.step()
        losses.append(loss.item())
    return np.array(losses)


def main() -> int:
    torch.manual_seed(0)
    tensors, metadata = {}, {"format": "pt", "transformers": transformers.__version__,
                             "torch": torch.__version__.split("+")[0]}
    for index, (family, (cls, hf_class, config, pair_label)) in enumerate(families().items()):
        rng = np.random.default_rng(index)
        model = cls(config, seed=index, dtype=np.float64).eval()
        for _, value in model.named_parameters():
            value += 0.1 * rng.standard_normal(value.shape)
        batch = batch_for(family, config, pair_label, rng)
        twin = twin_of(HF, model, hf_class)
        torch_batch = {k: torch.from_numpy(v) for k, v in batch.items()}
        out = twin(**torch_batch)
        out.loss.backward()
        names = [name for name, _ in model.named_parameters()]
        hf_params = dict(twin.named_parameters())
        metadata[f"{family}.config"] = json.dumps(config.to_dict())
        tensors.update({f"{family}.param.{n}": v.copy() for n, v in model.named_parameters()})
        tensors.update({f"{family}.input.{k}": v for k, v in batch.items()})
        tensors.update({f"{family}.{k}": v for k, v in outputs(family, out).items()})
        tensors.update({f"{family}.grad.{n}": hf_params[n].grad.numpy().copy() for n in names})
        tensors[f"{family}.train_losses"] = train_losses(twin, names, torch_batch)
    safetensors.save_file(tensors, OUT, metadata=metadata)
    print(f"wrote {OUT.name}: {len(tensors)} tensors, {OUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
