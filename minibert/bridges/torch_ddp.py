"""The real engine: the same model and batches trained by PyTorch DistributedDataParallel.

For the student who outgrows one process. ``ddp_train`` takes a minibert checkpoint
folder (``save_pretrained``), starts ``world_size`` PyTorch processes on this machine
(the gloo backend, CPU only, rendezvous through a file in ``out_dir``, traffic over
TCP on this machine), loads the checkpoint
into HuggingFace ``BertForPreTraining`` in each, wraps it in
``torch.nn.parallel.DistributedDataParallel`` and trains it on the given batches, each
process on its shard (``minibert.training.parallel.shard_batch``, the same split as
minibert's own workers). It writes the all-reduced gradients of every step and, at the
end, the trained weights as a checkpoint that ``BertForPreTraining.from_pretrained``
loads back into minibert.

DDP all-reduces by averaging over the processes, where minibert's workers sum: so each
process scales its share of the batch loss (``shard_weights``) by ``world_size``, and
the average is then the full batch's gradient. The loss is computed here from the
logits (sum of token cross-entropies over the whole batch's count), not by HF's
``loss``, which is each shard's own mean (the mean-of-means bug of parallel.py).

Requires the parity extra (torch and transformers); everything else in minibert runs
without it. Run ``python -m minibert.bridges.torch_ddp --help`` for a worker's
arguments (``ddp_train`` starts them; nobody needs to by hand).
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from minibert.checks import check_int, check_real
from minibert.io import safetensors
from minibert.io.fileio import atomic_write_json
from minibert.training.optim import no_weight_decay
from minibert.training.parallel import (
    WorkerError,
    child_environment,
    shard_batch,
    shard_weights,
)

__all__ = ["ddp_available", "ddp_train"]

BATCH_KEYS = ("input_ids", "token_type_ids", "attention_mask", "labels", "next_sentence_label")


def ddp_available() -> str | None:
    """None when torch (with torch.distributed) and transformers can be imported, else why not."""
    try:
        import torch
        import torch.distributed as dist
        import transformers  # noqa: F401
    except ImportError as error:
        return f"{error.name or error} is not installed (pip install -e '.[parity]')"
    if not dist.is_available():
        return f"torch {torch.__version__} was built without torch.distributed"
    return None


def ddp_train(model_dir, batches: list[dict], out_dir, world_size: int = 2, lr: float = 1e-3,
              weight_decay: float = 0.01, betas=(0.9, 0.999), eps: float = 1e-8,
              clip: float | None = 1.0, timeout: float = 600.0) -> dict:
    """Train ``model_dir``'s BertForPreTraining with DDP, one step per batch, in float64.

    Inputs: model_dir, a checkpoint folder (minibert's save_pretrained or HF's);
    batches, a list of dicts with input_ids, labels, next_sentence_label and optionally
    token_type_ids and attention_mask (B, T), B >= world_size; out_dir, a folder to
    create (or an empty one); world_size, processes (each one thread); lr, weight_decay,
    betas, eps: torch.optim.AdamW's, with minibert's no-decay rule (LayerNorm and
    biases); clip: the global gradient-norm limit or None; timeout: seconds for the job.
    Outputs: {"gradients": one dict name -> array per step (the all-reduced gradient, as
    rank 0 holds it after backward, before clipping), "losses": the full batch's loss per
    step, "model_dir": out_dir / "model" (config.json + model.safetensors), "seconds": per
    step, by rank 0}.
    Raises RuntimeError (with ddp_available()'s reason) without torch; WorkerError when a
    process fails (all are stopped, the first failure's message is shown).
    """
    reason = ddp_available()
    if reason is not None:
        raise RuntimeError(f"ddp_train needs PyTorch: {reason}")
    world_size = check_int("world_size", world_size, minimum=1)
    check_real("lr", lr, 0, above=True)
    check_real("timeout", timeout, 0, above=True)
    if clip is not None:
        check_real("clip", clip, 0, above=True)
    if not isinstance(batches, (list, tuple)) or not batches:
        raise ValueError("batches must be a non-empty list of batch dicts")
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    if not (model_dir / "config.json").is_file():
        raise FileNotFoundError(f"model_dir {str(model_dir)!r} has no config.json")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"out_dir {str(out_dir)!r} is not empty; give a new folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for step, batch in enumerate(batches):
        for key in BATCH_KEYS:
            if batch.get(key) is not None:
                tensors[f"{step}.{key}"] = np.ascontiguousarray(batch[key], dtype=np.int64)
        shard_batch(batch, world_size)  # refuses a batch smaller than world_size now
    safetensors.save_file(tensors, out_dir / "batches.safetensors")
    settings = {"model_dir": str(model_dir.resolve()), "steps": len(batches), "lr": lr,
                "weight_decay": weight_decay, "betas": list(betas), "eps": eps, "clip": clip}
    atomic_write_json(out_dir / "settings.json", settings)
    env = child_environment(1)
    processes, logs = [], []
    try:
        for rank in range(world_size):
            log = tempfile.TemporaryFile()
            logs.append(log)
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "minibert.bridges.torch_ddp", "--rank", str(rank),
                 "--world-size", str(world_size), "--work", str(out_dir)],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout
        while any(p.poll() is None for p in processes):
            failed = [r for r, p in enumerate(processes) if p.poll() not in (None, 0)]
            if failed or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        codes = [p.poll() for p in processes]
        if any(code != 0 for code in codes):
            # When one process fails the others lose their peer and fail too: give them a
            # moment, then report the first whose error is its own, not the lost connection.
            settle = time.monotonic() + 5
            while any(p.poll() is None for p in processes) and time.monotonic() < settle:
                time.sleep(0.05)
            codes = [p.poll() for p in processes]
            failed = [r for r, code in enumerate(codes) if code not in (None, 0)]
            tails = {}
            for r in failed or [0]:
                logs[r].seek(0)
                tails[r] = logs[r].read().decode("utf-8", "replace").strip().splitlines()[-3:]
            secondary = ("gloo", "Connection", "DistBackendError", "DistNetworkError")
            own = [r for r in failed if not any(word in " ".join(tails[r]) for word in secondary)]
            rank = (own or failed or [0])[0]
            tail = tails[rank]
            why = (f"process {rank} exited with code {codes[rank]}: " + " | ".join(tail)
                   if failed else f"the job did not finish within {timeout:g} s (process 0 "
                   f"said: {' | '.join(tail) or 'nothing'})")
            raise WorkerError(f"DDP training failed: {why}; all processes are stopped")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        for log in logs:
            log.close()
    record = json.loads((out_dir / "record.json").read_text())
    gradients = [safetensors.load_file(out_dir / f"gradients.{step}.safetensors", mmap=False)
                 for step in range(len(batches))]
    return {"gradients": gradients, "losses": record["losses"], "seconds": record["seconds"],
            "model_dir": out_dir / "model"}


# ------------------------------------------------------------------------------------------
# One DDP process (run by ddp_train)
# ------------------------------------------------------------------------------------------


def _worker(rank: int, world_size: int, work: Path) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from transformers import BertForPreTraining

    torch.set_num_threads(1)
    settings = json.loads((work / "settings.json").read_text())
    batches_file = safetensors.load_file(work / "batches.safetensors", mmap=False)
    # Rendezvous through a file in the job's folder: no port to pick, so no race with
    # another program taking it between ddp_train's check and rank 0's bind. Any
    # collective that waits longer than the timeout fails instead of hanging.
    dist.init_process_group("gloo", init_method=f"file://{(work / 'rendezvous').resolve()}",
                            rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=120))
    try:
        model = BertForPreTraining.from_pretrained(
            settings["model_dir"], torch_dtype=torch.float64, attn_implementation="eager")
        model.eval()  # dropout off, as in the minibert run it is compared with
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        named = dict(model.named_parameters())
        groups = [{"params": [p for n, p in named.items() if not no_weight_decay(n)],
                   "weight_decay": settings["weight_decay"]},
                  {"params": [p for n, p in named.items() if no_weight_decay(n)],
                   "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=settings["lr"], betas=tuple(settings["betas"]),
                                      eps=settings["eps"])
        losses, seconds = [], []
        for step in range(settings["steps"]):
            start = time.perf_counter()
            batch = {key.split(".", 1)[1]: value for key, value in batches_file.items()
                     if key.split(".", 1)[0] == str(step)}
            shards = shard_batch(batch, world_size)
            mlm_weight, nsp_weight = shard_weights(shards)[rank]
            shard = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in shards[rank].items()}
            labels = shard.pop("labels")
            nsp_labels = shard.pop("next_sentence_label", None)
            out = ddp(**shard)
            vocab = out.prediction_logits.shape[-1]
            masked = int((labels != -100).sum())
            mlm = F.cross_entropy(out.prediction_logits.reshape(-1, vocab), labels.reshape(-1),
                                  ignore_index=-100, reduction="sum") / max(masked, 1)
            loss = mlm_weight * mlm
            if nsp_labels is not None:
                loss = loss + nsp_weight * F.cross_entropy(out.seq_relationship_logits,
                                                           nsp_labels)
            optimizer.zero_grad()
            # DDP averages the gradients over the processes; our shares sum to the batch
            # loss, so scale each by world_size to make the average that sum's gradient.
            (loss * world_size).backward()
            share = torch.tensor([loss.item()], dtype=torch.float64)
            dist.all_reduce(share)
            losses.append(share.item())
            if rank == 0:
                grads = {n: p.grad.detach().numpy().copy() for n, p in named.items()
                         if p.grad is not None}
                safetensors.save_file(grads, work / f"gradients.{step}.safetensors")
            if settings["clip"] is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), settings["clip"])
            optimizer.step()
            seconds.append(time.perf_counter() - start)
        if rank == 0:
            model.save_pretrained(work / "model", safe_serialization=True)
            atomic_write_json(work / "record.json", {"losses": losses, "seconds": seconds})
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minibert.bridges.torch_ddp",
        description="One DistributedDataParallel process of minibert.bridges.torch_ddp."
                    "ddp_train (started by it, not by hand).")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args(argv)
    _worker(args.rank, args.world_size, args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
