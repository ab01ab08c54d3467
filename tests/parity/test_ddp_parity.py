"""The DDP bridge: torch DistributedDataParallel (gloo, 2 processes) against minibert.

The same checkpoint and the same batches: DDP's all-reduced gradients equal minibert's
full-batch gradients, and the DDP-trained weights, loaded back with from_pretrained,
equal minibert's own AdamW run, in float64. Skipped (one line) without torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import minibert as mb
from minibert.bridges import torch_ddp
from minibert.training.loop import train_step
from minibert.training.optim import AdamW
from minibert.training.parallel import WorkerError

pytestmark = pytest.mark.skipif(torch_ddp.ddp_available() is not None,
                                reason=f"DDP bridge: {torch_ddp.ddp_available()}")

# The batches and models of tests/training/test_parallel.py (tests/ is not a package).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
from test_parallel import CONFIG, make_model, uneven_batch  # noqa: E402


def flat(named: dict, names) -> np.ndarray:
    return np.concatenate([named[name].ravel() for name in names])


@pytest.mark.slow
def test_ddp_gradients_and_weights_equal_minibert(tmp_path):
    batches = [uneven_batch(30 + i) for i in range(3)]
    make_model().save_pretrained(tmp_path / "init")
    result = torch_ddp.ddp_train(tmp_path / "init", batches, tmp_path / "ddp", world_size=2,
                                 lr=1e-2, weight_decay=0.01, clip=1.0)
    model = mb.BertForPreTraining.from_pretrained(tmp_path / "init", dtype=np.float64)
    optimizer = AdamW(model, lr=1e-2, weight_decay=0.01)
    names = [name for name, _ in model.named_parameters()]
    for step, batch in enumerate(batches):
        optimizer.zero_grad()
        out = model(**batch)
        model.backward()
        ours = flat(dict(model.named_gradients()), names)
        theirs = flat(result["gradients"][step], names)
        assert np.linalg.norm(theirs - ours) <= 1e-10 * np.linalg.norm(ours)
        assert result["losses"][step] == pytest.approx(out.loss, rel=1e-12)
        train_step(model, batch, optimizer, 1.0)
    back = mb.BertForPreTraining.from_pretrained(result["model_dir"], dtype=np.float64)
    ours = flat(dict(model.named_parameters()), names)
    theirs = flat(dict(back.named_parameters()), names)
    assert np.abs(theirs - ours).max() <= 1e-10 * np.abs(ours).max()


def test_ddp_failure_stops_every_process(tmp_path):
    make_model().save_pretrained(tmp_path / "init")
    bad = uneven_batch(0, size=4)
    bad["input_ids"] = bad["input_ids"].copy()
    bad["input_ids"][3, 0] = CONFIG["vocab_size"] + 7  # only rank 1's shard is bad
    with pytest.raises(WorkerError, match="DDP training failed: process 1 exited"):
        torch_ddp.ddp_train(tmp_path / "init", [bad], tmp_path / "ddp", world_size=2,
                            timeout=120)


def test_ddp_train_refuses_bad_input(tmp_path):
    make_model().save_pretrained(tmp_path / "init")
    with pytest.raises(FileNotFoundError, match="model_dir"):
        torch_ddp.ddp_train(tmp_path / "missing", [uneven_batch(0)], tmp_path / "a")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not empty"):
        torch_ddp.ddp_train(tmp_path / "init", [uneven_batch(0)], tmp_path / "full")
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    with pytest.raises(ValueError, match="at most the batch size 1"):
        torch_ddp.ddp_train(tmp_path / "init", [uneven_batch(0, size=1)], tmp_path / "b")
