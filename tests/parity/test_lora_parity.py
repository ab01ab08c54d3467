"""LoRA against peft on transformers' BERT, float64: outputs, the adapters' gradients, the
frozen weights' (none), and merge_and_unload."""

from __future__ import annotations

import numpy as np
import pytest

import minibert as mb
from minibert.lora import apply_lora, lora_trainable, merge_lora


def test_lora_matches_peft(make_model, hf_twin, padded_batch, to_torch, assert_matches, hf):
    peft = pytest.importorskip("peft")
    torch = hf.torch
    model = make_model(cls=mb.BertForSequenceClassification, num_labels=3)
    twin = hf_twin(model)
    names = apply_lora(model, r=4, alpha=8.0, target_modules=["query", "value"], seed=1)
    rng = np.random.default_rng(2)
    for name, value in lora_trainable(model).named_parameters():
        if "lora_B" in name:  # B = 0 at the start would make dA zero in both
            value += rng.normal(0, 0.2, value.shape)
    config = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, bias="none",
                             target_modules=["query", "value"], modules_to_save=None)
    peft_model = peft.get_peft_model(twin, config).eval()
    ours = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in peft_model.named_parameters():
            if ".lora_" in name:
                key = name.removeprefix("base_model.model.").replace(".default", "")
                value.copy_(torch.from_numpy(ours[key]))
    assert sum(".lora_A" in n for n, _ in peft_model.named_parameters()) == len(names)

    batch = padded_batch(model.config)
    labels = np.array([0, 2, 1])
    out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"],
                labels=labels)
    model.zero_grad()
    model.backward()
    tensors = to_torch({k: batch[k] for k in ("input_ids", "token_type_ids",
                                              "attention_mask")})
    theirs = peft_model(**tensors, labels=torch.from_numpy(labels))
    theirs.loss.backward()
    assert_matches("logits", out.logits, theirs.logits.detach().numpy(), 1e-12)
    grads = dict(model.named_gradients())
    checked = 0
    for name, value in peft_model.named_parameters():
        key = name.removeprefix("base_model.model.").replace(".default", "")
        if ".lora_" in name:
            assert_matches(f"grad {key}", grads[key], value.grad.numpy(), 1e-10)
            checked += 1
        elif "base_layer" in name:
            assert value.grad is None  # frozen in peft
            assert not grads[key].any()  # and never computed here
    assert checked == 2 * len(names)

    merged = peft_model.merge_and_unload()
    assert merge_lora(model) == len(names)
    with torch.no_grad():
        reference = merged(**tensors).logits.numpy()
    assert_matches("merged logits", model(batch["input_ids"], batch["token_type_ids"],
                                          batch["attention_mask"]).logits, reference, 1e-12)
