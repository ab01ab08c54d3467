"""The reading path: the code a student reads is the code that runs.

One tiny training step (forward, backward, clipping, AdamW) is traced line by line, once as
the training jobs run it (``training.loop.train_step``) and once written out by hand with
the library's public calls. Both must execute the same lines of the model, its layers and
pairs, and the optimizer; the first forward pair must be a few frames below the model's
``forward``; and the step must touch only a handful of the package's files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import minibert as mb
from minibert.training.loop import train_step

PACKAGE = Path(mb.__file__).resolve().parent
LOOP = PACKAGE / "training" / "loop.py"
# the most frames from BertForPreTraining.forward (1) down to a functional pair (counted)
MAX_FRAMES = 6
MAX_FILES = 9  # erf and Phi have their own file, numerics.py


def tiny_model_and_batch():
    config = mb.BertConfig.preset("tiny", vocab_size=64, num_hidden_layers=2)
    model = mb.BertForPreTraining(config, seed=0)
    rng = np.random.default_rng(0)
    input_ids = rng.integers(5, 64, size=(4, 12))
    labels = np.where(rng.random((4, 12)) < 0.3, input_ids, -100)
    labels[:, 1] = input_ids[:, 1]
    batch = dict(input_ids=input_ids, token_type_ids=np.zeros_like(input_ids),
                 attention_mask=np.ones_like(input_ids), labels=labels,
                 next_sentence_label=np.array([0, 1, 0, 1]))
    return model, batch


def model_depth(frame) -> int | None:
    """Frames from ``BertForPreTraining.forward`` down to ``frame``, both counted (None when
    the model's forward is not on the stack)."""
    depth = 1
    while frame is not None:
        if frame.f_code.co_name == "forward" and \
                type(frame.f_locals.get("self")).__name__ == "BertForPreTraining":
            return depth
        frame, depth = frame.f_back, depth + 1
    return None


class Tracer:
    """Records (file, line) of every line the package runs, and the depth of each call to a
    ``functional`` pair below the model's ``forward``."""

    def __init__(self) -> None:
        self.lines: set[tuple[str, int]] = set()
        self.pair_depths: list[tuple[str, int]] = []

    def __call__(self, frame, event, arg):
        path = frame.f_code.co_filename
        if not path.startswith(str(PACKAGE)):
            return None  # NumPy and the standard library are not the reading path
        if event == "call" and path.endswith("functional.py") \
                and frame.f_code.co_name.endswith("_forward"):
            depth = model_depth(frame)
            if depth is not None:
                self.pair_depths.append((frame.f_code.co_name, depth))
        self.lines.add((str(Path(path).relative_to(PACKAGE)), frame.f_lineno))
        return self

    def run(self, function):
        sys.settrace(self)
        try:
            function()
        finally:
            sys.settrace(None)
        return self


def library_step(model, batch, optimizer):
    optimizer.zero_grad()
    model(**batch)
    model.backward()
    mb.clip_grad_norm(optimizer, 1.0)
    optimizer.step()


def test_the_training_job_and_the_library_run_the_same_lines():
    model, batch = tiny_model_and_batch()
    optimizer = mb.AdamW(model, lr=1e-3)
    library_step(model, batch, optimizer)  # warm: first-call branches behind us
    job = Tracer().run(lambda: train_step(model, batch, optimizer, 1.0))
    hand = Tracer().run(lambda: library_step(model, batch, optimizer))
    in_model = {line for line in job.lines if line[0] != str(LOOP.relative_to(PACKAGE))}
    assert in_model == hand.lines, sorted(in_model ^ hand.lines)[:20]


def test_the_first_forward_pair_is_a_few_frames_below_the_model():
    model, batch = tiny_model_and_batch()
    tracer = Tracer().run(lambda: model(**batch))
    assert tracer.pair_depths, "no functional pair ran"
    first, depth = tracer.pair_depths[0]
    assert first == "embedding_forward", tracer.pair_depths[:3]
    # BertForPreTraining.forward -> BertModel.forward -> BertEmbeddings.forward
    #   -> Embedding.forward -> functional.embedding_forward
    assert depth <= MAX_FRAMES, tracer.pair_depths[:3]


def test_a_training_step_reads_few_files():
    model, batch = tiny_model_and_batch()
    optimizer = mb.AdamW(model, lr=1e-3)
    library_step(model, batch, optimizer)
    files = {name for name, _ in Tracer().run(lambda: library_step(model, batch,
                                                                    optimizer)).lines}
    assert len(files) <= MAX_FILES, sorted(files)
    assert "functional.py" in files and "model.py" in files
