"""Token attributions: the gradient with respect to the input embeddings matches finite
differences in float64, gradient × input and integrated gradients follow their
definitions, and the figure and command draw them."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import minibert as mb  # noqa: E402
from minibert import attribution  # noqa: E402
from minibert.gradcheck import numerical_gradient, rel_error  # noqa: E402
from minibert.gradcheck.suite import perturb_parameters, small_config  # noqa: E402

T = 7


@pytest.fixture(scope="module")
def model():
    """A float64 BERT with MLM and NSP heads, parameters moved away from their init."""
    net = mb.BertForPreTraining(small_config(), seed=3, dtype=np.float64)
    perturb_parameters(net, np.random.default_rng(3))
    return net.eval()


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(4)
    input_ids = rng.integers(1, 41, size=(1, T))
    token_type_ids = np.array([[0, 0, 0, 0, 1, 1, 1]])
    attention_mask = np.array([[1, 1, 1, 1, 1, 1, 0]])  # the last position is padding
    return input_ids, token_type_ids, attention_mask


@pytest.mark.parametrize("target", [attribution.mlm_target(2, 17), attribution.nsp_target(1)],
                         ids=["fill-mask logit", "next-sentence logit"])
def test_the_embedding_gradient_matches_finite_differences_in_float64(model, inputs, target):
    input_ids, token_type_ids, attention_mask = inputs
    words = model.bert.embeddings.word_embeddings.params["weight"][input_ids].copy()  # (1, T, H)

    def logit(vectors):
        values, _ = attribution.target_and_gradient(
            model, input_ids, token_type_ids, attention_mask, target=target, word_vectors=vectors)
        return values

    _, analytic = attribution.target_and_gradient(
        model, input_ids, token_type_ids, attention_mask, target=target, word_vectors=words)
    numeric = numerical_gradient(logit, words, np.ones(1))
    assert rel_error(analytic, numeric) < 1e-7
    # The padded position is hidden from every query: its vector cannot move the logit.
    assert np.abs(analytic[0, -1]).max() == 0.0
    assert all(np.all(g == 0) for _, g in model.named_gradients())  # inspection only


def test_gradient_x_input_is_the_gradient_dotted_with_the_word_vectors(model, inputs):
    input_ids, token_type_ids, attention_mask = inputs
    result = attribution.gradient_x_input(model, input_ids, token_type_ids, attention_mask,
                                       target=attribution.mlm_target(3, 5))
    words = model.bert.embeddings.word_embeddings.params["weight"][input_ids[0]]  # (T, H)
    np.testing.assert_allclose(result.scores, (result.gradient * words).sum(-1), rtol=1e-12)
    out = model(input_ids, token_type_ids, attention_mask)
    assert result.target_value == pytest.approx(out.prediction_logits[0, 3, 5], rel=1e-12)


def test_integrated_gradients_are_complete(model, inputs):
    input_ids, token_type_ids, attention_mask = inputs
    target = attribution.nsp_target(0)
    coarse = attribution.integrated_gradients(model, input_ids, token_type_ids, attention_mask,
                                           target=target, steps=4)
    fine = attribution.integrated_gradients(model, input_ids, token_type_ids, attention_mask,
                                         target=target, steps=64)
    difference = fine.target_value - fine.baseline_value
    # Completeness: the scores add up to f(input) - f(baseline), better with more steps.
    assert abs(fine.completeness_gap) < 1e-3 * max(1.0, abs(difference))
    assert abs(fine.completeness_gap) < abs(coarse.completeness_gap)
    assert fine.scores.sum() == pytest.approx(difference, abs=1e-3 * max(1.0, abs(difference)))
    out = model(input_ids, token_type_ids, attention_mask)
    assert fine.target_value == pytest.approx(out.seq_relationship_logits[0, 0], rel=1e-12)


def test_one_step_integrated_gradients_from_a_zero_baseline_is_gradient_x_input_at_half(
        model, inputs):
    input_ids, token_type_ids, attention_mask = inputs
    target = attribution.mlm_target(1, 9)
    one = attribution.integrated_gradients(model, input_ids, token_type_ids, attention_mask,
                                        target=target, steps=1)
    words = model.bert.embeddings.word_embeddings.params["weight"][input_ids]
    _, half = attribution.target_and_gradient(model, input_ids, token_type_ids, attention_mask,
                                           target=target, word_vectors=0.5 * words)
    np.testing.assert_allclose(one.scores, (half[0] * words[0]).sum(-1), rtol=1e-10)


def test_bad_targets_and_models_are_refused(model, inputs):
    input_ids, token_type_ids, attention_mask = inputs
    with pytest.raises(ValueError, match="target.position must be <= 6"):
        attribution.gradient_x_input(model, input_ids, target=attribution.mlm_target(7, 1))
    with pytest.raises(ValueError, match=r"token id\) must be <= 40"):
        attribution.gradient_x_input(model, input_ids, target=attribution.mlm_target(0, 41))
    with pytest.raises(ValueError, match="label must be >= 0 and <= 1, got 2"):
        attribution.nsp_target(2)
    with pytest.raises(TypeError, match="mlm_target"):
        attribution.gradient_x_input(model, input_ids, target=("mlm", 1, 2))
    with pytest.raises(TypeError, match="needs .bert and .cls"):
        attribution.gradient_x_input(mb.BertModel(small_config()), input_ids,
                                  target=attribution.nsp_target())
    masked_lm = mb.BertForMaskedLM(small_config(), dtype=np.float64).eval()
    with pytest.raises(ValueError, match="no NSP head"):
        attribution.gradient_x_input(masked_lm, input_ids, target=attribution.nsp_target())
    with pytest.raises(ValueError, match="one example"):
        attribution.gradient_x_input(model, np.repeat(input_ids, 2, 0),
                                  target=attribution.nsp_target())
    model.train()
    try:
        with pytest.raises(ValueError, match="model.eval"):
            attribution.gradient_x_input(model, input_ids, target=attribution.nsp_target())
    finally:
        model.eval()


# ----- the figure and the command -------------------------------------------------------


def test_saliency_figure_draws_one_bar_row_per_method():
    from minibert import viz

    tokens = ["[CLS]", "at", "the", "[MASK]", "[SEP]"]
    scores = np.array([0.0, 1.5, -2.0, 0.3, 0.1])
    fig = viz.saliency_figure(tokens, {"gradient × input": scores, "attention": np.full(5, 0.2)},
                              highlight=3, probability_rows=["attention"], title="t")
    top, bottom = fig.axes
    np.testing.assert_allclose([bar.get_height() for bar in top.patches[:5]], scores)
    assert [label.get_text() for label in top.get_xticklabels()] == tokens
    assert [label.get_text() for label in bottom.get_xticklabels()] == tokens
    assert bottom.get_ylim() == (0.0, 1.0)
    assert top.get_xticklabels()[3].get_fontweight() == "bold"
    with pytest.raises(ValueError, match=r"must have shape \(5,\)"):
        viz.saliency_figure(tokens, {"x": np.ones(4)})


def test_the_attention_command_draws_the_saliency_view(tmp_path):
    from minibert.cli import main

    output = tmp_path / "attribution.png"
    code = main(["attention", "she deposited the money at the [MASK] before noon.",
                 "--model", "tiny-toy", "--view", "saliency", "-o", str(output)])
    assert code == 0 and output.read_bytes().startswith(b"\x89PNG")
    assert main(["attention", "no mask here", "--model", "tiny-toy", "--view", "saliency",
                 "-o", str(output)]) != 0
