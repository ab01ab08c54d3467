"""The graded assignment: stubs fail by name, solutions score full marks, planted bugs are
caught by exactly their task, bad input costs one task, and the model runs student code.

The mutation sweep grades only the mutated task, in this process (the grader's own
``grade_task``); the subprocess grader runs whole in three tests.
"""

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minibert as mb
from minibert import functional as F
from minibert.assignment import (
    TASK_NAMES,
    TASKS,
    NotAWorkspace,
    create_workspace,
    grade,
    grade_task,
    instructor,
    task_by_name,
)
from minibert.assignment.bugs import BUG_IDS, grade_bug
from minibert.gradcheck import check_loss

SEED = 1234  # the hidden tests' seed of the instructor tree below
BUGS = instructor.load("bugs_key").BUGS  # the lab's key, from the repository's instructor/


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The instructor's tree: student/, solutions/, hidden/."""
    return create_workspace(tmp_path_factory.mktemp("course") / "hw", instructor=True, seed=SEED)


def _copy(source: Path, target: Path, **replace: str) -> Path:
    """A copy of a workspace with some files' text replaced (file name -> text)."""
    target.mkdir()
    for path in source.iterdir():
        if path.is_file():
            (target / path.name).write_text(replace.get(path.name, path.read_text()))
    return target


@pytest.mark.slow
def test_student_tree_fails_every_task_by_name(tree):
    report = grade(tree / "student")
    assert [row.task for row in report.rows] == list(TASK_NAMES)
    assert report.total == 0 and report.max_total == 100
    for row, task in zip(report.rows, TASKS):
        assert row.message == (f"{task.function}: not implemented yet (raises "
                               f"NotImplementedError)"), row


def test_student_tree_holds_no_line_of_the_reference_backwards(tree):
    student_lines = set()
    for path in (tree / "student").iterdir():
        if path.is_file():
            student_lines.update(line.strip() for line in path.read_text().splitlines())
    student_text = "\n".join(student_lines)
    solutions = "\n".join(p.read_text() for p in (tree / "solutions").glob("*.py"))
    checked = 0
    answers = instructor.load("solutions")

    for task in (t for t in TASKS if t.part != "training"):  # the backward passes
        source = inspect.getsource(getattr(answers, task.function))
        body = source.split('"""', 2)[-1]  # after the docstring
        for line in body.splitlines():
            line = line.strip()
            if len(line) < 8 or line.startswith("#"):
                continue
            checked += 1
            assert line not in student_lines, (task.name, line)
            if "=" in line:
                assert line not in student_text, (task.name, line)
            assert line in solutions  # the instructor's tree does hold it
    assert checked > 60


@pytest.mark.parametrize("task,cache", [
    ("linear", F.LinearCache), ("embedding", F.EmbeddingCache), ("layernorm", F.LayerNormCache),
    ("gelu", F.GeluCache), ("softmax", F.SoftmaxCache), ("dropout", F.DropoutCache),
    ("attention", F.AttentionCache), ("cross_entropy", F.CrossEntropyCache)])
def test_each_stub_names_every_field_of_its_cache(task, cache):
    """The stubs describe minibert.functional's caches: a renamed field must show here."""
    for field in cache._fields:
        assert field in task_by_name(task).stub, (task, field)


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["1", "2"])
def test_solutions_score_full_marks_the_same_under_1_and_2_blas_threads(tree, threads):
    """The CLI with 1 or 2 BLAS threads in the caller, against the grader in this process;
    no flag on the solutions."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "grade",
                           str(tree / "solutions"), "--hidden", str(tree / "hidden"), "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["total"] == report["max_total"] == 100
    assert report["levels"] == ["public", "hidden"]
    for row in report["tasks"]:
        assert (row["passed"], row["message"], row["flags"]) == (True, "ok", [])
        assert grade_task(tree / "solutions", row["task"], hidden_seed=SEED) == (True, "ok")


@pytest.mark.slow
def test_bad_input_costs_one_task_each(tree, tmp_path):
    solutions = tree / "solutions"
    layernorm = (solutions / "layernorm.py").read_text()
    softmax = (solutions / "softmax.py").read_text()
    broken = _copy(solutions, tmp_path / "broken", **{
        "linear.py": (solutions / "linear.py").read_text().replace("def linear_backward(",
                                                                  "def linear_backward(:"),
        "layernorm.py": layernorm.replace("def layernorm_backward(dout: np.ndarray, cache):",
                                          "def layernorm_backward(dout):"),
        "softmax.py": softmax.replace("return probs * (", "return (probs * (").replace(
            "keepdims=True))\n", "keepdims=True))).sum(axis=0)\n"),
        "gelu.py": "def gelu_backward(dout, cache):\n    while True:\n        pass\n",
    })
    (broken / "nsp.py").unlink()
    # 10 s: the correct tasks finish well within it on a busy machine, the loop never does
    report = grade(broken, time_limit=10.0)
    rows = {row.task: row for row in report.rows}
    assert rows["linear"].message.startswith("linear.py line ")
    assert "SyntaxError" in rows["linear"].message
    assert rows["layernorm"].message.startswith("layernorm.py: layernorm_backward(dout) has "
                                                "the wrong signature")
    assert rows["softmax"].message.startswith("softmax_backward: dx has shape ")
    assert rows["gelu"].message.startswith("time limit of 10 s exceeded while the checks ran "
                                           "(an infinite loop?)")
    assert rows["nsp"].message == "nsp.py is missing from the workspace"
    failed = {"linear", "layernorm", "softmax", "gelu", "nsp"}
    for row in report.rows:
        assert "\n" not in row.message
        assert row.passed == (row.task not in failed), row
    assert report.total == 100 - sum(rows[t].max_points for t in failed)


def test_not_a_workspace_is_one_line_exit_2(tmp_path):
    with pytest.raises(NotAWorkspace, match="no .minibert-assignment.json"):
        grade(tmp_path)
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "grade",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert str(tmp_path) in done.stderr
    (tmp_path / "keep.txt").write_text("not a workspace")
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "create",
                           str(tmp_path), "--overwrite"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "is not a workspace; refusing" in done.stderr
    assert (tmp_path / "keep.txt").read_text() == "not a workspace"


# Each mutation: (task, text in the solution file, its replacement, the words of its hint).
MUTATIONS = [
    ("linear", "dbias = rows_dout.sum(axis=0)", "dbias = rows_dout.mean(axis=0)",
     "a mean where a sum belongs?"),
    ("linear", "dx = dout @ weight  #", "dx = dout @ weight.T.T * 0.5  #",
     "0.5 times the right value"),
    ("embedding", "np.add.at(dweight, cache.ids.reshape(-1), dout.reshape(-1, width))",
     "dweight[cache.ids.reshape(-1)] += dout.reshape(-1, width)", "use np.add.at"),
    ("layernorm", "\n                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))",
     ")", "the variance term is missing?"),
    ("layernorm", "dx_hat - dx_hat.mean(axis=-1, keepdims=True)", "dx_hat",
     "the mean term is missing?"),
    ("gelu", "cache.cdf + x * pdf", "cache.cdf", "x * phi(x) term is missing?"),
    ("gelu", "* (1.0 - tanh_inner**2) * du_dx", "* (1.0 - tanh_inner**2)", "missing du/dx?"),
    ("softmax", "(dout * probs).sum(axis=axis, keepdims=True)",
     "(dout * probs).sum(axis=-1, keepdims=True)", "along cache.axis"),
    ("dropout", "dout * cache.scale, 0.0", "dout * 1.0, 0.0", "the backward scales too"),
    ("attention", "dq = scale * np.einsum(", "dq = 1.0 * np.einsum(", "1/sqrt(D)"),
    ("attention", 'dv = np.einsum("bnts,bntd->bnsd", dropped, dout)',
     'dv = np.einsum("bnts,bntd->bnsd", probs, dout)',
     "the ones after dropout (cache.dropped_probs)"),
    ("cross_entropy", "(float(dloss) / cache.count)", "(float(dloss) / cache.valid.size)",
     "cache.count"),
    ("cross_entropy", "cache.valid[..., None] * (", "np.ones(cache.valid.shape)[..., None] * (",
     "must get zero gradient: multiply by cache.valid"),
    ("encoder_block", "d_attention_output = d_sum + linear(",
     "d_attention_output = linear(", "the second residual"),
    ("encoder_block", "dx = d_sum.copy()", "dx = 0 * d_sum", "both paths of the first residual"),
    ("tied_decoder", '"word_embeddings"] = d_table_decoder + F.embedding_backward',
     '"word_embeddings"] = F.embedding_backward', "the decoder's (dlogits^T @ activated) must be"),
    ("tied_decoder", '"word_embeddings"] = d_table_decoder + F.embedding_backward(d_embedded, '
     "cache.embedding)", '"word_embeddings"] = d_table_decoder', "(+=), not assigned?"),
    ("model_gradcheck", "(plus - minus) / (2.0 * h)", "(plus - float(compute_loss())) / h",
     "centred differences"),
    ("model_gradcheck", "            flat[index] = original\n", "", "restore each entry"),
    ("adamw", "param *= 1.0 - lr * weight_decay", "grad = grad + weight_decay * param",
     "(L2) instead of"),
    ("adamw", "if total > max_norm:", "if False:", "not scaled, although the global norm"),
    ("masking", "if draw < 0.8:", "if draw < 0.9:", "cumulative thresholds"),
    ("nsp", "other += other >= index", "other = other", "A's own document"),
]


@pytest.mark.parametrize("task,old,new,said", MUTATIONS,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MUTATIONS)])
def test_each_mutation_fails_its_task(tree, tmp_path, task, old, new, said):
    file = task_by_name(task).file
    text = (tree / "solutions" / file).read_text()
    assert old in text, f"the mutation no longer applies to {file}"
    mutant = _copy(tree / "solutions", tmp_path / "mutant", **{file: text.replace(old, new, 1)})
    passed, message = grade_task(mutant, task, hidden_seed=SEED)
    assert not passed
    assert message.startswith(task_by_name(task).function.split("_step")[0]) or \
        message.startswith("clip_grad_norm")
    assert said in message, message


def test_a_task_is_graded_with_minibert_s_versions_of_the_others(tree, tmp_path):
    """attention.py imports the student's own softmax_backward, which is wrong: attention
    is still graded on its own, so the one mistake costs the softmax task only."""
    solutions = tree / "solutions"
    softmax = (solutions / "softmax.py").read_text().replace("probs * (dout - ", "(dout - ")
    attention = (solutions / "attention.py").read_text().replace(
        "from minibert import functional as F", "from softmax import softmax_backward  # noqa\n"
        "from minibert import functional as F")
    assert "from softmax import" in attention
    mutant = _copy(solutions, tmp_path / "m", **{"softmax.py": softmax,
                                                 "attention.py": attention})
    assert not grade_task(mutant, "softmax")[0]
    assert grade_task(mutant, "attention", hidden_seed=SEED) == (True, "ok")


def _micro_model_check() -> float:
    rng = np.random.default_rng(0)
    config = mb.BertConfig(vocab_size=13, hidden_size=8, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=12,
                           max_position_embeddings=8, hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0)
    model = mb.BertForPreTraining(config, seed=0, dtype=np.float64)
    for _, value in model.named_parameters():
        value += rng.normal(0.0, 0.2, value.shape)
    ids = rng.integers(1, 13, size=(2, 5))
    labels = np.where(rng.random((2, 5)) < 0.5, ids, -100)
    labels[:, 0] = ids[:, 0]
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])

    def loss():
        return model(ids, attention_mask=mask, labels=labels,
                     next_sentence_label=np.array([0, 1])).loss

    table = check_loss(model, loss, model.backward, max_entries=12)
    return max(row.rel_error for row in table.rows if "LayerNorm" in row.name)


def test_use_implementation_runs_the_model_on_the_student_s_backward(tree, tmp_path):
    solutions = tree / "solutions"
    wrong = (solutions / "layernorm.py").read_text().replace(
        "\n                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))", ")")
    mutant = _copy(solutions, tmp_path / "wrong", **{"layernorm.py": wrong})
    reference = F.layernorm_backward
    with mb.use_implementation(solutions) as used:
        assert used == [t.function for t in TASKS if t.part == "layers"]
        assert _micro_model_check() < 1e-6  # the student's eight backwards train BERT
    with mb.use_implementation(mutant, names=["layernorm_backward"]) as used:
        assert used == ["layernorm_backward"]
        assert _micro_model_check() > 1e-3  # the model really ran the student's function
    assert F.layernorm_backward is reference
    with mb.use_implementation(tree / "student") as used:
        assert used == []  # stubs are left out
    with pytest.raises(ValueError, match="names must be among"):
        with mb.use_implementation(solutions, names=["softmax_forward"]):
            pass


def test_bug_lab_counts_each_fix_on_its_own(tmp_path):
    lab = create_workspace(tmp_path / "lab", lab="bugs", instructor=True)
    source = (lab / "student" / "buggy_bert.py").read_text()
    assert len(BUGS) == len(BUG_IDS)
    assert all(grade_bug(lab / "solutions", bug) == (True, "fixed") for bug in BUG_IDS)
    assert not any(grade_bug(lab / "student", bug)[0] for bug in BUG_IDS)
    for index, bug in enumerate(BUGS):
        assert source.count(bug.planted) == 1, bug.name
        folder = tmp_path / f"fix{index}"
        _copy(lab / "student", folder,
              **{"buggy_bert.py": source.replace(bug.planted, bug.fixed)})
        fixed = [b for b in BUG_IDS if grade_bug(folder, b)[0]]
        assert fixed == [BUG_IDS[index]], bug.name
    report = grade(lab / "student", jobs=2)
    assert (report.total, report.max_total) == (0, 6)


def _train_losses(steps: int = 15) -> list[float]:
    from minibert.training.loop import train_step

    config = mb.BertConfig(vocab_size=17, hidden_size=8, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=12,
                           max_position_embeddings=8)
    model = mb.BertForPreTraining(config, seed=3, dtype=np.float64)
    rng = np.random.default_rng(3)
    ids = rng.integers(4, 17, size=(4, 6))
    batch = {"input_ids": ids, "attention_mask": np.ones((4, 6), dtype=np.int64),
             "labels": np.where(rng.random((4, 6)) < 0.4, ids, -100),
             "next_sentence_label": np.array([0, 1, 0, 1])}
    optimizer = mb.AdamW(model, lr=1e-2)
    return [float(train_step(model, batch, optimizer, clip=1.0)[0].loss) for _ in range(steps)]


def test_the_student_s_backward_trains_bert(tree, tmp_path):
    """Dropout on: the student's dropout_backward runs too. The solutions compute what
    minibert's pairs compute, so the losses equal a run on minibert's pairs to rounding
    (float64); a wrong dropout backward changes them."""
    with mb.use_implementation(tree / "solutions"):
        losses = _train_losses()
    assert np.allclose(_train_losses(), losses, rtol=1e-9, atol=0.0)
    assert losses[-1] < 0.7 * losses[0]
    solutions = tree / "solutions"
    unscaled = (solutions / "dropout.py").read_text().replace("dout * cache.scale, 0.0",
                                                              "dout * 1.0, 0.0")
    mutant = _copy(solutions, tmp_path / "unscaled", **{"dropout.py": unscaled})
    with mb.use_implementation(mutant, names=["dropout_backward"]):
        assert not np.allclose(_train_losses()[1:], losses[1:], rtol=1e-6, atol=0.0)
