"""Data parallelism (minibert.training.parallel): N workers equal one process on the batch.

Every comparison scales its differences by the size of the quantity compared (a norm or
the largest weight), never by an entry that may be rounding noise. Float64 throughout,
except the test that measures what float32 rounding does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from small_models import perturbed, relative_difference, small_config

import minibert as mb
from minibert.checks import IGNORE_INDEX
from minibert.training import parallel as P
from minibert.training.loop import train_step
from minibert.training.optim import AdamW

# The small config (H=16, 2 layers of 2 heads, I=24) with V=53, 32 positions, no dropout.
CONFIG = dict(vocab_size=53, max_position_embeddings=32, hidden_dropout_prob=0.0,
              attention_probs_dropout_prob=0.0)


def uneven_batch(seed: int, size: int = 7, length: int = 12) -> dict:
    """Padded sequences of different lengths, a different number of MLM targets in each."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, CONFIG["vocab_size"], (size, length))
    lengths = rng.integers(3, length + 1, size)
    lengths[0] = length
    mask = (np.arange(length)[None] < lengths[:, None]).astype(np.int64)
    ids = np.where(mask == 1, ids, 0)
    labels = np.full((size, length), IGNORE_INDEX)
    for row, n in enumerate(lengths):
        picked = rng.choice(n, size=1 + row % 3 + n // 4, replace=False)
        labels[row, picked] = ids[row, picked]
    types = ((np.arange(length)[None] >= lengths[:, None] // 2) & (mask == 1)).astype(np.int64)
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask,
            "labels": labels, "next_sentence_label": rng.integers(0, 2, size)}


def make_model(dtype=np.float64) -> mb.BertForPreTraining:
    """A model whose weights are moved away from initialisation (LayerNorms included)."""
    return perturbed(mb.BertForPreTraining(small_config(**CONFIG), seed=3, dtype=dtype), 4, 0.05)


def full_batch_gradient(model, batch) -> np.ndarray:
    optimizer = AdamW(model, lr=1e-2)
    optimizer.zero_grad()
    model(**batch)
    model.backward()
    return optimizer.flat_grads.copy()


# -- the ring all-reduce, in one process ---------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("size", [1, 2, 17, 1000])
def test_ring_allreduce_sums_and_counts_bytes(workers, size):
    rng = np.random.default_rng(workers * 100 + size)
    buffers = [rng.standard_normal(size) for _ in range(workers)]
    expected = np.sum(buffers, axis=0)
    # An entry whose sum is near 0 is rounding noise: scale by the sum of magnitudes.
    scale = np.abs(buffers).sum(axis=0)
    sent = P.ring_allreduce(buffers)
    for buffer in buffers:
        np.testing.assert_array_equal(buffer, buffers[0])  # the same bits everywhere
    assert np.all(np.abs(buffers[0] - expected) <= 4 * np.finfo(float).eps * scale)
    itemsize = buffers[0].itemsize
    # Every chunk travels N - 1 times in each phase: 2 (N - 1) gradients in all, and each
    # worker sends 2 (N - 1) / N of one, up to one value per step from uneven chunks.
    assert sum(sent) == 2 * (workers - 1) * size * itemsize
    for count in sent:
        assert abs(count - 2 * (workers - 1) / workers * size * itemsize) \
            <= 2 * (workers - 1) * itemsize


def test_ring_schedule_ends_with_every_chunk_everywhere():
    n = 4
    schedule = P.ring_schedule(n)
    assert len(schedule) == 2 * (n - 1)
    # Track which workers' contributions each worker's copy of each chunk holds.
    holds = [[{r} for _ in range(n)] for r in range(n)]
    for step in schedule:
        messages = [set(holds[r][step["sends"][r]]) for r in range(n)]
        for r in range(n):
            assert step["receives"][r] == step["sends"][(r - 1) % n]
            chunk = step["receives"][r]
            incoming = messages[(r - 1) % n]
            if step["phase"] == "reduce-scatter":
                holds[r][chunk] = holds[r][chunk] | incoming
            else:
                holds[r][chunk] = incoming
    assert all(holds[r][c] == set(range(n)) for r in range(n) for c in range(n))


@pytest.mark.parametrize("allreduce", [P.ring_allreduce, P.shared_allreduce])
def test_allreduce_refuses_mismatched_buffers(allreduce):
    with pytest.raises(ValueError, match=r"buffers\[1\]"):
        allreduce([np.zeros(3), np.zeros(4)])
    with pytest.raises(ValueError, match="non-empty"):
        allreduce([])


@pytest.mark.parametrize("workers", [1, 2, 3, 5])
@pytest.mark.parametrize("size", [1, 17, 1000, 70_000])
def test_shared_allreduce_equals_the_ring(workers, size):
    """The two all-reduces give the same sum: exactly on integers (every order of addition
    is exact), to rounding on random floats; each leaves the same bits in every buffer."""
    rng = np.random.default_rng(workers * 7 + size)
    for integers in (True, False):
        values = [rng.integers(-1000, 1000, size).astype(np.float32) if integers
                  else rng.standard_normal(size).astype(np.float32) for _ in range(workers)]
        ring, shared = [v.copy() for v in values], [v.copy() for v in values]
        sent = P.ring_allreduce(ring)
        read = P.shared_allreduce(shared)
        for buffer in shared:
            np.testing.assert_array_equal(buffer, shared[0])
        expected = np.sum(np.array(values, np.float64), axis=0)
        if integers:
            np.testing.assert_array_equal(shared[0], expected)
            np.testing.assert_array_equal(ring[0], shared[0])
        else:
            scale = np.abs(values).sum(axis=0)
            assert np.all(np.abs(shared[0] - ring[0]) <= 8 * np.finfo(np.float32).eps * scale)
        # Shared memory: each worker reads (N - 1) / N of the gradient, half the ring's sends.
        assert sum(read) == (workers - 1) * size * 4
        assert sum(sent) == 2 * sum(read)


# -- shards and their shares of the loss ---------------------------------------------------


def test_shard_batch_uneven_and_trimmed():
    batch = uneven_batch(0)
    shards = P.shard_batch(batch, 3)
    assert [len(s["input_ids"]) for s in shards] == [3, 2, 2]
    for shard in shards:
        mask = shard["attention_mask"]
        assert mask[:, -1].any()  # no column of padding only is left at the end
        assert shard["labels"].shape == mask.shape == shard["input_ids"].shape
    untrimmed = P.shard_batch(batch, 3, trim_padding=False)
    assert all(s["input_ids"].shape[1] == 12 for s in untrimmed)
    np.testing.assert_array_equal(np.concatenate([s["next_sentence_label"] for s in shards]),
                                  batch["next_sentence_label"])


@pytest.mark.parametrize("bad, error, match", [
    (0, ValueError, "num_shards"), (8, ValueError, "at most the batch size 7"),
    (True, TypeError, "num_shards"), (2.0, TypeError, "num_shards")])
def test_shard_batch_refuses(bad, error, match):
    with pytest.raises(error, match=match):
        P.shard_batch(uneven_batch(0), bad)


def test_shard_weights_add_up_to_the_batch():
    shards = P.shard_batch(uneven_batch(0), 3)
    weights = P.shard_weights(shards)
    assert sum(w[0] for w in weights) == pytest.approx(1.0, abs=1e-15)
    assert sum(w[1] for w in weights) == pytest.approx(1.0, abs=1e-15)
    assert len({w[0] for w in weights}) > 1  # the shards hold different numbers of targets
    assert P.shard_weights(shards, "mean_of_means") == [(1 / 3, 1 / 3)] * 3
    with pytest.raises(ValueError, match="reduction"):
        P.shard_weights(shards, "mean")


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_gradient_accumulation_is_the_full_batch(workers):
    batch = uneven_batch(1)
    expected = full_batch_gradient(make_model(), batch)
    model = make_model()
    optimizer = AdamW(model, lr=1e-2)
    optimizer.zero_grad()
    loss = P.accumulate_gradients(model, P.shard_batch(batch, workers))
    assert relative_difference(optimizer.flat_grads, expected) < 1e-13
    assert loss == pytest.approx(make_model()(**batch).loss, rel=1e-13)


def test_mean_of_means_is_the_bug_and_global_shares_the_fix():
    batch = uneven_batch(1)
    expected = full_batch_gradient(make_model(), batch)
    model = make_model()
    optimizer = AdamW(model, lr=1e-2)
    optimizer.zero_grad()
    P.accumulate_gradients(model, P.shard_batch(batch, 3), "mean_of_means")
    assert relative_difference(optimizer.flat_grads, expected) > 1e-2  # visibly wrong
    # ... and right when every shard has the same numbers of sequences and targets.
    even = uneven_batch(2, size=4)
    even["labels"][:] = IGNORE_INDEX
    even["labels"][:, 1] = even["input_ids"][:, 1]
    expected = full_batch_gradient(make_model(), even)
    optimizer.zero_grad()
    P.accumulate_gradients(model, P.shard_batch(even, 2), "mean_of_means")
    assert relative_difference(optimizer.flat_grads, expected) < 1e-13


def test_padding_changes_nothing_in_a_shard():
    batch = uneven_batch(5)
    model = make_model()
    optimizer = AdamW(model, lr=1e-2)
    grads = []
    for trim in (True, False):
        optimizer.zero_grad()
        P.accumulate_gradients(model, P.shard_batch(batch, 3, trim_padding=trim))
        grads.append(optimizer.flat_grads.copy())
    assert relative_difference(grads[0], grads[1]) < 1e-13


# -- worker processes ----------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_equal_one_process_over_adamw_steps(workers):
    batches = [uneven_batch(10 + i) for i in range(3)]
    reference = make_model()
    ref_optimizer = AdamW(reference, lr=1e-2, weight_decay=0.01)
    ref_losses = [train_step(reference, b, ref_optimizer, 1.0)[0].loss for b in batches]

    model = make_model()
    optimizer = AdamW(model, lr=1e-2, weight_decay=0.01)
    expected = full_batch_gradient(make_model(), batches[0])
    with P.DataParallel(model, optimizer, workers, clip=1.0) as parallel:
        got = np.concatenate([g.ravel() for g in parallel.gradients(batches[0]).values()])
        assert relative_difference(got, expected) < 1e-13
        results = [parallel.step(b) for b in batches]
        parallel.pull()
    assert optimizer.step_count == 3
    scale = np.abs(ref_optimizer.flat_params).max()
    assert np.abs(optimizer.flat_params - ref_optimizer.flat_params).max() <= 1e-12 * scale
    assert np.abs(optimizer.flat_exp_avg_sq - ref_optimizer.flat_exp_avg_sq).max() \
        <= 1e-12 * np.abs(ref_optimizer.flat_exp_avg_sq).max()
    for result, expected in zip(results, ref_losses):
        assert result.loss == pytest.approx(expected, rel=1e-13)
        assert len(result.bytes_sent) == workers
    grad_bytes = optimizer.flat_grads.nbytes
    # Each worker reads the other N - 1 slots' copies of its chunk: N - 1 gradients in all.
    assert sum(results[0].bytes_sent) == (workers - 1) * grad_bytes
    assert all(process.poll() is not None for process in parallel.processes)


def test_float32_workers_differ_from_one_process_by_rounding_only():
    batch = uneven_batch(20, size=8)
    expected = full_batch_gradient(make_model(np.float32), batch).astype(np.float64)
    exact = full_batch_gradient(make_model(np.float64), batch)
    model = make_model(np.float32)
    optimizer = AdamW(model, lr=1e-2)
    with P.DataParallel(model, optimizer, 2) as parallel:
        sharded = np.concatenate([g.ravel() for g in parallel.gradients(batch).values()])
    flat = expected
    # The two float32 results differ by what float32 rounding does to either of them.
    assert relative_difference(sharded, flat) < 10 * relative_difference(flat, exact) + 1e-6
    assert relative_difference(sharded, flat) < 1e-5


def test_a_failing_worker_stops_all_with_a_clear_error():
    batch = uneven_batch(0, size=6)
    bad = dict(batch, input_ids=batch["input_ids"].copy())
    bad["input_ids"][5, 0] = 999  # only the last shard is bad
    model = make_model()
    parallel = P.DataParallel(model, AdamW(model, lr=1e-2), 3)
    try:
        with pytest.raises(P.WorkerError,
                           match=r"worker 2 failed during 'step': IndexError.*999"):
            parallel.step(bad)
        assert all(process.poll() is not None for process in parallel.processes)
        with pytest.raises(RuntimeError, match="closed"):
            parallel.step(batch)
    finally:
        parallel.close(force=True)


def test_a_stuck_worker_times_out_and_all_are_stopped():
    model = make_model()
    parallel = P.DataParallel(model, AdamW(model, lr=1e-2), 2, timeout=2.0)
    try:
        os.kill(parallel.processes[1].pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(P.WorkerError, match="no reply"):
            parallel.step(uneven_batch(0))
        assert time.monotonic() - start < 30
        assert all(process.poll() is not None for process in parallel.processes)
    finally:
        parallel.close(force=True)


def test_workers_exit_when_the_parent_dies(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time, numpy as np
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        import minibert as mb
        from minibert.training import parallel as P
        from minibert.training.optim import AdamW
        model = mb.BertForPreTraining(mb.BertConfig(**{CONFIG!r}), seed=0)
        parallel = P.DataParallel(model, AdamW(model, lr=1e-3), 2)
        print(" ".join(str(p.pid) for p in parallel.processes), flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(pids) == 2
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 20
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        time.sleep(0.05)
    assert not alive, f"workers {alive} outlived their parent"


def _alive(pid: int) -> bool:
    if not os.path.isdir("/proc"):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


def test_the_pair_loss_weight_reaches_every_path_of_the_gradient():
    """MLM + 3 x NSP, from the one-process step, gradient accumulation and the workers,
    against the sum of the two parts' gradients taken separately."""
    batch = uneven_batch(1)
    parts = []
    for mlm_weight, nsp_weight in ((1.0, 0.0), (0.0, 1.0)):
        model = make_model()
        optimizer = AdamW(model, lr=1e-2)
        optimizer.zero_grad()
        model(**batch)
        model.backward(mlm_weight=mlm_weight, nsp_weight=nsp_weight)
        parts.append(optimizer.flat_grads.copy())
    expected = parts[0] + 3.0 * parts[1]
    # the weight changes the gradient
    assert relative_difference(parts[0] + parts[1], expected) > 1e-2

    model = make_model()
    optimizer = AdamW(model, lr=1e-2)
    out, _ = train_step(model, batch, optimizer, None, {"nsp_weight": 3.0})
    assert relative_difference(optimizer.flat_grads, expected) < 1e-13
    assert out.loss == pytest.approx(out.masked_lm_loss + out.next_sentence_loss, rel=1e-15)

    model = make_model()
    optimizer = AdamW(model, lr=1e-2)
    optimizer.zero_grad()
    loss = P.accumulate_gradients(model, P.shard_batch(batch, 3), pair_loss_weight=3.0)
    assert relative_difference(optimizer.flat_grads, expected) < 1e-13
    assert loss == pytest.approx(out.loss, rel=1e-13)  # the logged loss: the plain sum

    model = make_model()
    with P.DataParallel(model, AdamW(model, lr=1e-2), 2, pair_loss_weight=3.0) as parallel:
        got = np.concatenate([g.ravel() for g in parallel.gradients(batch).values()])
        step = parallel.step(batch)
    assert relative_difference(got, expected) < 1e-13
    assert step.loss == pytest.approx(out.loss, rel=1e-13)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(num_workers=0), ValueError, "num_workers"),
    (dict(num_workers=2, pair_loss_weight=0.0), ValueError, "pair_loss_weight"),
    (dict(num_workers=2, clip=0), ValueError, "clip"),
    (dict(num_workers=2, threads_per_worker=0), ValueError, "threads_per_worker"),
])
def test_data_parallel_refuses_bad_settings(kwargs, error, match):
    model = make_model()
    with pytest.raises(error, match=match):
        P.DataParallel(model, AdamW(model, lr=1e-2), **kwargs)


def test_data_parallel_needs_the_models_optimizer():
    with pytest.raises(ValueError, match="optimizer must be the one built on model"):
        P.DataParallel(make_model(), AdamW(make_model(), lr=1e-2), 2)


def test_albert_shards_accumulate_to_the_full_batch():
    """The shares reach ALBERT's backward too (its second weight is sop_weight).

    Dropout is off (the SOP head's too): with it, shards draw other masks."""
    config = mb.AlbertConfig(vocab_size=53, embedding_size=8, hidden_size=16,
                             num_hidden_layers=2, num_attention_heads=2, intermediate_size=24,
                             max_position_embeddings=32, hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0)
    batch = uneven_batch(7)
    batch["sentence_order_label"] = batch.pop("next_sentence_label")
    grads = []
    for shards in (1, 3):
        model = mb.AlbertForPreTraining(config, seed=3, dtype=np.float64)
        optimizer = AdamW(model, lr=1e-2)
        optimizer.zero_grad()
        P.accumulate_gradients(model, P.shard_batch(batch, shards))
        grads.append(optimizer.flat_grads.copy())
    assert relative_difference(grads[1], grads[0]) < 1e-13
    model = mb.AlbertForPreTraining(config, seed=3, dtype=np.float64)
    optimizer = AdamW(model, lr=1e-2)
    optimizer.zero_grad()
    P.accumulate_gradients(model, P.shard_batch(batch, 3), "mean_of_means")
    assert relative_difference(optimizer.flat_grads, grads[0]) > 1e-2
    # ... and through worker processes, which rebuild an ALBERT from its config.
    model = mb.AlbertForPreTraining(config, seed=3, dtype=np.float64)
    with P.DataParallel(model, AdamW(model, lr=1e-2), 2) as parallel:
        sharded = np.concatenate([g.ravel() for g in parallel.gradients(batch).values()])
    assert relative_difference(sharded, grads[0]) < 1e-13


# -- stopping and failing: the transport's agreement, and naming the worker that failed ----


def test_a_stop_request_and_a_workers_signal_become_the_steps_agreed_stop():
    model = make_model()
    batch = uneven_batch(0)
    with P.DataParallel(model, AdamW(model, lr=1e-2), 2) as parallel:
        assert parallel.step(batch).stop == 0
        result = parallel.step(batch, lambda: signal.SIGHUP)  # read after the replies
        assert (result.stop, result.source) == (signal.SIGHUP, None)
        os.kill(parallel.processes[1].pid, signal.SIGTERM)  # recorded, sent with the reply
        deadline = time.monotonic() + 20
        while (result := parallel.step(batch)).stop == 0 and time.monotonic() < deadline:
            pass
        assert (result.stop, result.source) == (signal.SIGTERM, "worker 1")
        assert result.signals == {1: signal.SIGTERM}


def test_a_stopped_worker_is_named_by_its_heartbeat():
    """SIGSTOP: the worker neither dies nor answers; its heartbeat ages and names it."""
    model = make_model()
    parallel = P.DataParallel(model, AdamW(model, lr=1e-2), 2, heartbeat_timeout=2.0)
    try:
        os.kill(parallel.processes[1].pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(P.WorkerError, match=r"worker 1 failed during 'step': stopped "
                                                r"answering \(no heartbeat") as caught:
            parallel.step(uneven_batch(0))
        assert caught.value.rank == 1
        assert time.monotonic() - start < 30
        assert all(process.poll() is not None for process in parallel.processes)
    finally:
        parallel.close(force=True)


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.2])
def test_kill_9_of_worker_1_names_worker_1_not_the_worker_that_lost_its_peer(delay):
    """Worker 0 fails too (its peer is gone) and may report first; the cause is named."""
    model = make_model()
    batch = uneven_batch(0, size=6)
    parallel = P.DataParallel(model, AdamW(model, lr=1e-2), 2)
    try:
        parallel.step(batch)
        killer = threading.Timer(delay, os.kill, (parallel.processes[1].pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(P.WorkerError) as caught:
            for _ in range(200):
                parallel.step(batch)
        killer.join()
        assert caught.value.rank == 1, str(caught.value)
        assert caught.value.exit.startswith("killed by SIGKILL"), str(caught.value)
        assert caught.value.signum == signal.SIGKILL
    finally:
        parallel.close(force=True)
