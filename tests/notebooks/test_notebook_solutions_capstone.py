"""The capstone's solutions are right, and its checks name each planted mistake.

Notebook 14 has two exercises: one BERT layer's forward and backward with dropout, and one
AdamW step. The solutions in ``notebooks/solutions/14_layer_by_hand_solutions.py`` are
compared with ``minibert.flat_layer`` and ``BertLayer`` and checked against finite
differences; then the notebook's own check cells (tagged ``exercise-check``) are run exactly as
committed: they must say "pass" for the solutions, "not implemented yet" for the stubs, and
"fail", naming the mistake, for copies of the solution with one mistake planted in the source.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest
from test_notebook_solutions_layers import stub

import minibert as mb
from minibert import flat_layer
from minibert.gradcheck import numerical_gradient, rel_error

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "14_layer_by_hand.ipynb"
SOLUTION = NOTEBOOK.parent / "solutions" / "14_layer_by_hand_solutions.py"


def solution_module(replacements=()) -> types.ModuleType:
    """The solutions file as a module, with each (old, new) text replaced once."""
    text = SOLUTION.read_text(encoding="utf-8")
    for old, new in replacements:
        assert text.count(old) == 1, f"the solution no longer holds {old!r} exactly once"
        text = text.replace(old, new)
    module = types.ModuleType("capstone_solutions")
    exec(compile(text, str(SOLUTION), "exec"), module.__dict__)
    return module


def check_cell(defines: str) -> str:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    cells = ["".join(cell["source"]) for cell in notebook["cells"]
             if "exercise-check" in cell.get("metadata", {}).get("tags", [])]
    found = [code for code in cells if f"def {defines}(" in code]
    assert len(found) == 1, f"expected one exercise-check cell defining {defines}"
    return found[0]


def run_check(defines: str, **student):
    """Run the committed check cell with the student's functions; returns its verdict."""
    namespace = dict(student)
    exec(compile(check_cell(defines), f"{NOTEBOOK.name}:{defines}", "exec"), namespace)
    return namespace["verdict"]


# ----------------------------------------------------------------------------------------
# The solutions
# ----------------------------------------------------------------------------------------


def small_layer(seed=0):
    config = mb.BertConfig(vocab_size=10, hidden_size=8, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=12)
    layer = mb.BertModel(config, seed=seed, dtype=np.float64).encoder.layer[0].eval()
    rng = np.random.default_rng(seed)
    for _, value in layer.named_parameters():
        value += 0.2 * rng.standard_normal(value.shape)
    x = rng.standard_normal((3, 4, 8))  # (B, T, H)
    attention_mask = np.ones((3, 4))
    attention_mask[2, 2:] = 0
    return layer, x, attention_mask[:, None, None, :], rng


def test_layer_solution_equals_bert_layer_without_dropout():
    solution = solution_module()
    layer, x, mask, rng = small_layer()
    params = flat_layer.layer_parameters(layer)
    out, cache = solution.my_layer_forward(x, params, mask, 2)
    np.testing.assert_allclose(out, layer(x, mask), rtol=0, atol=1e-13)
    dout = rng.standard_normal(out.shape)
    layer.zero_grad()
    expected_dx = layer.backward(dout)
    dx, grads = solution.my_layer_backward(dout, cache)
    assert rel_error(dx, expected_dx) < 1e-12
    assert set(grads) == set(flat_layer.LAYER_PARAMETERS)
    for name, grad in layer.named_gradients():
        assert np.abs(grads[name] - grad).max() <= 1e-12 * np.abs(grad).max() + 1e-300, name


@pytest.mark.parametrize("seed", [0, 1])
def test_layer_solution_with_dropout_passes_a_float64_gradient_check(seed):
    solution = solution_module()
    layer, x, mask, rng = small_layer(seed)
    params = {name: value.copy() for name, value in flat_layer.layer_parameters(layer).items()}
    drop_p = 0.3
    keep = {"attention_probs": rng.random((3, 2, 4, 4)) >= drop_p,
            "attention_output": rng.random(x.shape) >= drop_p,
            "output": rng.random(x.shape) >= drop_p}
    dout = rng.standard_normal(x.shape)
    _, cache = solution.my_layer_forward(x, params, mask, 2, keep, drop_p)
    dx, grads = solution.my_layer_backward(dout, cache)

    def forward(_changed):
        return solution.my_layer_forward(x, params, mask, 2, keep, drop_p)[0]

    assert rel_error(dx, numerical_gradient(forward, x, dout)) < 1e-7
    for name, value in params.items():
        if name.endswith("key.bias"):  # exactly 0: q . key.bias shifts a row of scores
            assert np.abs(grads[name]).max() < 1e-12 * np.abs(grads[name[:-4] + "weight"]).max()
            continue
        assert rel_error(grads[name], numerical_gradient(forward, value, dout)) < 1e-7, name


def test_adamw_solution_matches_minibert_adamw_and_decays_alone_without_gradient():
    solution = solution_module()
    # five updates of every parameter of a layer, beside minibert.AdamW: the notebook's check
    assert run_check("check_adamw_step", my_adamw_step=solution.my_adamw_step) == "pass"
    # a zero gradient with fresh moments: only the decoupled decay acts
    param = np.random.default_rng(3).standard_normal((4, 3))
    before = param.copy()
    assert solution.my_adamw_step(param, np.zeros_like(param), np.zeros_like(param),
                                  np.zeros_like(param), 0.01, 1, (0.9, 0.999), 1e-8, 0.1) is None
    np.testing.assert_allclose(param, before * (1 - 0.01 * 0.1), rtol=1e-15)


# ----------------------------------------------------------------------------------------
# The layer's check: pass, not implemented yet, and each planted mistake named
# ----------------------------------------------------------------------------------------


def test_layer_check_passes_the_solution_and_waits_for_stubs(capsys):
    solution = solution_module()
    assert run_check("check_layer", my_layer_forward=solution.my_layer_forward,
                     my_layer_backward=solution.my_layer_backward) == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert run_check("check_layer", my_layer_forward=stub, my_layer_backward=stub) == \
        "not implemented yet"
    assert run_check("check_layer", my_layer_forward=solution.my_layer_forward,
                     my_layer_backward=stub) == "not implemented yet"
    assert "the forward passes" in capsys.readouterr().out


FORWARD_SOFTMAX = "shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))"
SOFTMAX_SUM = "(d_probs * probs).sum(axis=-1, keepdims=True)"
# (case, replacements planted in the solution, words the check's message must hold)
PLANTED = [
    ("second residual missing (backward)",
     [("d_attention_output = d_attention_output + d_sum2  # residual 2",
       "d_attention_output = d_attention_output")],
     "second residual missing in the backward"),
    ("first residual missing (backward)",
     [("dx = d_sum1.copy()  # residual 1", "dx = np.zeros_like(d_sum1)")],
     "first residual missing in the backward"),
    ("scale missing (backward)",
     [('dq = (d_scores @ c["k"]) * c["scale"]', 'dq = d_scores @ c["k"]'),
      ('dk = (d_scores.swapaxes(-1, -2) @ c["q"]) * c["scale"]',
       'dk = d_scores.swapaxes(-1, -2) @ c["q"]')],
     "scale missing in the backward"),
    ("transpose missing in dK",
     [('dk = (d_scores.swapaxes(-1, -2) @ c["q"])', 'dk = (d_scores @ c["q"])')],
     "transpose missing"),
    ("softmax backward over the wrong axis",
     [(SOFTMAX_SUM, "(d_probs * probs).sum(axis=-2, keepdims=True)")],
     "wrong axis in the softmax backward"),
    ("softmax Jacobian's diagonal only",
     [(f"d_scores = probs * (d_probs - {SOFTMAX_SUM})",
       "d_scores = probs * (1 - probs) * d_probs")],
     "only the softmax Jacobian's diagonal"),
    ("dropout's backward skipped on the probabilities",
     [('d_probs = dropout_with(d_dropped, keep.get("attention_probs"), drop_p)',
       "d_probs = d_dropped")],
     "dropout's backward missing on the attention probabilities"),
    ("dropout's backward skipped after output.dense",
     [('d_ffn = dropout_with(d_sum2, keep.get("output"), drop_p)', "d_ffn = d_sum2")],
     "dropout's backward missing after output.dense"),
    ("dropout's backward skipped after attention.output.dense",
     [('d_attended = dropout_with(d_sum1, keep.get("attention_output"), drop_p)',
       "d_attended = d_sum1")],
     "dropout's backward missing after attention.output.dense"),
    ("dV from the probabilities before dropout",
     [('dv = c["dropped"].swapaxes(-1, -2)', 'dv = c["probs"].swapaxes(-1, -2)')],
     "dV from the probabilities before dropout"),
    ("dx through the query only",
     [("        dx = dx + d_x", '        dx = dx + d_x if name == "query" else dx')],
     "dx takes only the query's path"),
    ("heads' gradients merged by a plain reshape",
     [('d_context = split_heads(d_merged, c["num_heads"])',
       'd_context = d_merged.reshape(c["q"].shape)'),
      ("F.linear_backward(merge_heads(d_heads), c[name])",
       "F.linear_backward(d_heads.reshape(dx.shape), c[name])")],
     "heads' gradients merged with a plain reshape"),
    ("scale missing (forward)",
     [("scale = 1.0 / math.sqrt(q.shape[-1])", "scale = 1.0")],
     "forward without dropout: scale missing"),
    ("second residual missing (forward)",
     [("F.layernorm_forward(attention_output + ffn,", "F.layernorm_forward(ffn,")],
     "forward without dropout: second residual missing"),
    ("first residual missing (forward)",
     [("F.layernorm_forward(\n        x + attended,", "F.layernorm_forward(\n        attended,")],
     "forward without dropout: first residual missing"),
    ("softmax over the wrong axis (forward)",
     [(FORWARD_SOFTMAX, FORWARD_SOFTMAX.replace("-1", "-2")),
      ("shifted.sum(axis=-1, keepdims=True)", "shifted.sum(axis=-2, keepdims=True)")],
     "softmax over the wrong axis"),
    ("padding mask ignored",
     [("scores = np.where(mask == 0, -np.inf, scores)", "scores = scores + 0 * mask")],
     "the padding mask is ignored"),
    ("heads split by a plain reshape (forward)",
     [("return x.reshape(batch, seq, num_heads, hidden // num_heads).transpose(0, 2, 1, 3)",
       "return x.reshape(batch, num_heads, seq, hidden // num_heads)"),
      ("return x.transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)",
       "return x.reshape(batch, seq, heads * size)")],
     "heads split with a plain reshape"),
    ("tanh GELU",
     [("F.gelu_forward(hidden)", 'F.gelu_forward(hidden, "tanh")')],
     "GELU in its tanh form"),
    ("dropout without its scale",
     [("return x * keep / (1.0 - drop_p)", "return x * keep")],
     "dropout without its scale"),
    ("dropout not applied in the forward",
     [("    if keep is None:\n        return x", "    if True:\n        return x")],
     "the keep masks were not applied"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a softmax over the wrong axis: NaN
@pytest.mark.parametrize("case, replacements, named", PLANTED, ids=[case[0] for case in PLANTED])
def test_layer_check_names_each_planted_mistake(case, replacements, named, capsys):
    wrong = solution_module(replacements)
    verdict = run_check("check_layer", my_layer_forward=wrong.my_layer_forward,
                        my_layer_backward=wrong.my_layer_backward)
    printed = capsys.readouterr().out
    assert verdict == "fail", f"{case}: the check said {verdict!r}\n{printed}"
    assert named in printed, f"{case}: the check did not name it:\n{printed}"


def test_layer_check_refuses_a_modified_dout_and_a_missing_gradient(capsys):
    solution = solution_module()

    def modifies_dout(dout, cache):
        result = solution.my_layer_backward(dout.copy(), cache)
        dout[...] = 0.0
        return result

    def drops_a_gradient(dout, cache):
        dx, grads = solution.my_layer_backward(dout, cache)
        del grads["output.dense.bias"]
        return dx, grads

    for backward, message in ((modifies_dout, "dout was modified in place"),
                              (drops_a_gradient, "no gradient for 'output.dense.bias'")):
        assert run_check("check_layer", my_layer_forward=solution.my_layer_forward,
                         my_layer_backward=backward) == "fail"
        assert message in capsys.readouterr().out


# ----------------------------------------------------------------------------------------
# The AdamW check
# ----------------------------------------------------------------------------------------

ADAMW_PLANTED = [
    ("L2 instead of decoupled decay",
     [("param *= 1.0 - lr * weight_decay  # decoupled weight decay: shrink first",
       "grad = grad + weight_decay * param")],
     "weight decay added to the gradient (L2)"),
    ("no bias correction",
     [("m_hat = m / (1.0 - beta1**step)", "m_hat = m"),
      ("v_hat = v / (1.0 - beta2**step)", "v_hat = v")],
     "the bias correction is missing"),
    ("eps inside the root",
     [("np.sqrt(v_hat) + eps", "np.sqrt(v_hat + eps)")],
     "eps inside the square root"),
    ("betas swapped",
     [("beta1, beta2 = betas", "beta2, beta1 = betas")],
     "beta1 and beta2 swapped"),
    ("moments not kept",
     [("    m *= beta1\n    m += (1.0 - beta1) * grad", "    m = beta1 * m + (1.0 - beta1) * grad"),
      ("    v *= beta2\n    v += (1.0 - beta2) * grad * grad",
       "    v = beta2 * v + (1.0 - beta2) * grad * grad")],
     "m and v must be updated in place"),
]


PAPER_FORM = [("    m_hat = m / (1.0 - beta1**step)", "    m_hat = m"),
              ("    v_hat = v / (1.0 - beta2**step)", "    v_hat = v"),
              ("param -= lr * m_hat / (np.sqrt(v_hat) + eps)",
               "param -= lr * np.sqrt(1.0 - beta2**step) / (1.0 - beta1**step) * m_hat / (\n"
               "        np.sqrt(v_hat) + eps)")]


def test_adamw_check_accepts_the_papers_efficient_form(capsys):
    """Kingma & Ba's Algorithm 1, efficient version: eps meets the uncorrected sqrt(v)."""
    paper = solution_module(PAPER_FORM)
    assert run_check("check_adamw_step", my_adamw_step=paper.my_adamw_step) == "pass"
    assert "Kingma & Ba's efficient form" in capsys.readouterr().out


def test_adamw_check_waits_for_the_stub():
    assert run_check("check_adamw_step", my_adamw_step=stub) == "not implemented yet"


@pytest.mark.parametrize("case, replacements, named", ADAMW_PLANTED,
                         ids=[case[0] for case in ADAMW_PLANTED])
def test_adamw_check_names_each_planted_mistake(case, replacements, named, capsys):
    wrong = solution_module(replacements)
    verdict = run_check("check_adamw_step", my_adamw_step=wrong.my_adamw_step)
    printed = capsys.readouterr().out
    assert verdict == "fail", f"{case}: the check said {verdict!r}\n{printed}"
    assert named in printed, f"{case}: the check did not name it:\n{printed}"
