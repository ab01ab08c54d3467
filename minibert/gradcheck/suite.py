"""The standard gradient checks: every functional pair, every layer, BERT's blocks, the model.

``python -m minibert gradcheck`` prints these as one table; the test suite and the
notebooks run the same cases. Inputs are float64 and random; parameters are moved away
from 0 and 1 (a LayerNorm weight of exactly 1 or a bias of 0 can hide a missing term).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from minibert import functional as F
from minibert import layers
from minibert import sentence as S
from minibert.checks import IGNORE_INDEX
from minibert.config import BertConfig
from minibert.family import distillation as D
from minibert.family import electra as E
from minibert.gradcheck import GradCheckTable, check_function, check_loss, check_module
from minibert.layers import Module

__all__ = ["SINGLE_LAYER_TOL", "MODEL_TOL", "small_config", "perturb_parameters",
           "function_cases", "module_cases", "model_cases", "albert_cases",
           "electra_cases", "run_all"]

SINGLE_LAYER_TOL = 1e-7  # one layer, float64
MODEL_TOL = 1e-6  # the whole model, float64


def small_config(**overrides) -> BertConfig:
    """A BERT small enough to check by finite differences in a few seconds."""
    values = dict(vocab_size=41, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=24, max_position_embeddings=16, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0)
    values.update(overrides)
    return BertConfig(**values)


def perturb_parameters(module: Module, rng: np.random.Generator, scale: float = 0.2) -> None:
    """Add N(0, scale) noise to every parameter in place, moving them away from 0 and 1."""
    for _, value in module.named_parameters():
        value += rng.normal(0.0, scale, value.shape)


def _padding_mask(rng, batch, seq_len):
    lengths = rng.integers(max(1, seq_len // 2), seq_len + 1, size=batch)
    lengths[0] = seq_len
    return (np.arange(seq_len)[None, :] < lengths[:, None]).astype(np.int64)


def _masked_lm_batch(rng, vocab_size: int, batch: int = 3, seq: int = 8):
    """input_ids (B, T), padded attention_mask (B, T) and MLM labels (B, T): about 30% of
    the real tokens are targets (-100 elsewhere), position 1 always, so no row is empty."""
    input_ids = rng.integers(1, vocab_size, size=(batch, seq))
    attention_mask = _padding_mask(rng, batch, seq)
    labels = np.where(rng.random((batch, seq)) < 0.3, input_ids, IGNORE_INDEX)
    labels[attention_mask == 0] = IGNORE_INDEX
    labels[:, 1] = input_ids[:, 1]  # at least one target per row
    return input_ids, attention_mask, labels


def _function_specs(seed: int):
    """(name, forward, backward, inputs, kwargs) of every case for the functional pairs."""
    rng = np.random.default_rng(seed)
    normal = rng.standard_normal
    batch, seq, hidden, heads, head_size, classes = 2, 5, 6, 2, 3, 7

    yield ("linear", F.linear_forward, F.linear_backward,
           {"x": normal((batch, seq, hidden)), "weight": normal((4, hidden)),
            "bias": normal(4)}, {})
    ids = rng.integers(0, 9, size=(batch, seq))
    yield ("embedding", F.embedding_forward, F.embedding_backward,
           {"ids": ids, "weight": normal((9, hidden))}, {})
    yield ("layernorm", F.layernorm_forward, F.layernorm_backward,
           {"x": normal((batch, seq, hidden)), "weight": 1.0 + normal(hidden),
            "bias": normal(hidden)}, {"eps": 1e-12})
    for form in ("none", "tanh"):
        yield (f"gelu({form})", F.gelu_forward, F.gelu_backward,
               {"x": 2.0 * normal((batch, seq, hidden))}, {"approximate": form})
    # keep relu's inputs away from the kink at 0, where finite differences straddle it
    yield ("relu", F.relu_forward, F.relu_backward,
           {"x": np.sign(normal((batch, hidden))) * (0.1 + rng.random((batch, hidden)))}, {})
    yield "tanh", F.tanh_forward, F.tanh_backward, {"x": normal((batch, hidden))}, {}
    yield ("softmax", F.softmax_forward, F.softmax_backward,
           {"x": normal((batch, seq, classes))}, {})
    yield ("dropout", F.dropout_forward, F.dropout_backward,
           {"x": normal((batch, seq, hidden))},
           lambda: {"p": 0.3, "rng": np.random.default_rng(7)})
    q, k, v = (normal((batch, heads, seq, head_size)) for _ in range(3))
    mask = _padding_mask(rng, batch, seq)[:, None, None, :]
    yield ("attention", F.attention_forward, F.attention_backward,
           {"q": q, "k": k, "v": v}, {"mask": mask})
    yield ("attention+dropout", F.attention_forward, F.attention_backward,
           {"q": q, "k": k, "v": v},
           lambda: {"mask": mask, "dropout_p": 0.2, "rng": np.random.default_rng(3),
                    "training": True})
    labels = rng.integers(0, classes, size=(batch, seq))
    labels[0, 1] = labels[1, 3] = IGNORE_INDEX
    yield ("cross_entropy", F.cross_entropy_forward, F.cross_entropy_backward,
           {"logits": normal((batch, seq, classes)), "labels": labels}, {})
    # The descendants' pairs, beside their models (family.distillation, sentence,
    # family.electra). Distillation losses: T = 2 so that a missing T^2 or 1/T changes the
    # gradient; the teacher's array is a fixed target (its gradient is None, not checked).
    selected = _padding_mask(rng, batch, seq).astype(bool)
    yield ("soft_target_kl", D.soft_target_kl_forward, D.soft_target_kl_backward,
           {"student_logits": 2.0 * normal((batch, seq, classes)),
            "teacher_logits": 2.0 * normal((batch, seq, classes))},
           {"mask": selected, "temperature": 2.0})
    yield ("cosine_embedding", D.cosine_embedding_forward, D.cosine_embedding_backward,
           {"student_hidden": normal((batch, seq, hidden)),
            "teacher_hidden": normal((batch, seq, hidden))}, {"mask": selected})
    # Sentence embeddings: padding in the pooled rows; 3 anchors against 3 positives and
    # 2 hard negatives; scale 20 as sentence-transformers' MultipleNegativesRankingLoss.
    yield ("mean_pooling", S.mean_pooling_forward, S.mean_pooling_backward,
           {"hidden_states": normal((batch, seq, hidden))},
           {"attention_mask": _padding_mask(rng, batch, seq)})
    yield ("l2_normalize", S.l2_normalize_forward, S.l2_normalize_backward,
           {"x": normal((batch, seq, hidden))}, {})
    yield ("contrastive_loss", S.contrastive_loss_forward, S.contrastive_loss_backward,
           {"anchors": normal((3, hidden)), "candidates": normal((5, hidden))}, {"scale": 20.0})
    yield ("binary_cross_entropy", E.binary_cross_entropy_forward,
           E.binary_cross_entropy_backward, {"logits": 2.0 * normal((batch, seq))},
           {"labels": rng.integers(0, 2, size=(batch, seq)),
            "mask": _padding_mask(rng, batch, seq)})


def function_cases(seed: int = 0) -> Iterator[tuple[str, Callable[[], GradCheckTable]]]:
    """(name, thunk) for every pair in ``functional`` and every descendant's pair (in
    ``family.distillation``, ``sentence`` and ``family.electra``); each returns a table."""
    for name, forward, backward, inputs, kwargs in _function_specs(seed):
        yield name, (lambda f=forward, b=backward, i=inputs, k=kwargs:
                     check_function(f, b, i, kwargs=k))


def module_cases(seed: int = 0) -> Iterator[tuple[str, Callable[[], GradCheckTable]]]:
    """(name, thunk) for the stateful layers and BERT's blocks."""
    from minibert import model as M
    from minibert.base import make_init
    from minibert.heads.pretraining import BertPredictionHeadTransform

    rng = np.random.default_rng(seed)
    normal = rng.standard_normal
    batch, seq, hidden = 2, 5, 6
    x = normal((batch, seq, hidden))

    def prepared(module):
        perturb_parameters(module, rng)
        return module

    init_rng = np.random.default_rng(seed + 1)
    yield "Linear", lambda: check_module(
        prepared(layers.Linear(hidden, 4, init_rng, dtype=np.float64)), {"x": x})
    yield "LayerNorm", lambda: check_module(
        prepared(layers.LayerNorm(hidden, dtype=np.float64)), {"x": x})
    yield "Embedding", lambda: check_module(
        prepared(layers.Embedding(9, hidden, init_rng, dtype=np.float64)),
        {"ids": rng.integers(0, 9, size=(batch, seq))})
    yield "GELU", lambda: check_module(layers.GELU("none"), {"x": x})
    yield "Tanh", lambda: check_module(layers.Tanh(), {"x": x})
    yield "Softmax", lambda: check_module(layers.Softmax(), {"x": x})

    config = small_config(hidden_size=hidden, num_attention_heads=2, intermediate_size=10)
    mask = _padding_mask(rng, batch, seq)[:, None, None, :].astype(bool)
    init = make_init(config, seed, np.float64)
    yield "BertSelfAttention", lambda: check_module(
        prepared(M.BertSelfAttention(init)), {"hidden_states": x},
        forward_kwargs={"mask": mask})
    yield "BertLayer", lambda: check_module(
        prepared(M.BertLayer(init)), {"hidden_states": x}, forward_kwargs={"mask": mask})
    yield "BertPooler", lambda: check_module(prepared(M.BertPooler(init)), {"hidden_states": x})
    yield "BertPredictionHeadTransform", lambda: check_module(
        prepared(BertPredictionHeadTransform(init)), {"hidden_states": x})


def _check_model_loss(model, seed: int, **inputs) -> GradCheckTable:
    """check_loss of ``model(**inputs).loss``."""
    def loss() -> float:
        return model(**inputs).loss

    return check_loss(model, loss, model.backward, seed=seed, max_entries=24)


def model_cases(seed: int = 0) -> Iterator[tuple[str, Callable[[], GradCheckTable]]]:
    """(name, thunk) for BertForPreTraining end to end, dropout off and on."""
    from minibert.heads import BertForPreTraining

    for dropout in (0.0, 0.1):
        def run(dropout=dropout) -> GradCheckTable:
            rng = np.random.default_rng(seed)
            config = small_config(hidden_dropout_prob=dropout,
                                  attention_probs_dropout_prob=dropout)
            model = BertForPreTraining(config, seed=seed, dtype=np.float64)
            perturb_parameters(model, rng)
            model.train(dropout > 0)
            input_ids, attention_mask, labels = _masked_lm_batch(rng, config.vocab_size)
            batch, seq = input_ids.shape
            token_type_ids = (np.arange(seq)[None, :] >= seq // 2).astype(np.int64).repeat(
                batch, 0) * attention_mask
            next_sentence_label = rng.integers(0, 2, size=batch)
            return _check_model_loss(model, seed, input_ids=input_ids,
                                     token_type_ids=token_type_ids, attention_mask=attention_mask,
                                     labels=labels, next_sentence_label=next_sentence_label)

        yield f"BertForPreTraining(dropout={dropout})", run


def albert_cases(seed: int = 0) -> Iterator[tuple[str, Callable[[], GradCheckTable]]]:
    """(name, thunk) for AlbertForPreTraining end to end (MLM + SOP, padding): embeddings
    of width E < H and three layers running one shared block, whose gradient is the sum of
    its three uses."""
    from minibert.family.albert import AlbertConfig, AlbertForPreTraining

    def run() -> GradCheckTable:
        rng = np.random.default_rng(seed)
        config = AlbertConfig(vocab_size=41, embedding_size=6, hidden_size=8,
                              num_hidden_layers=3, num_attention_heads=2,
                              intermediate_size=12, max_position_embeddings=16)
        model = AlbertForPreTraining(config, seed=seed, dtype=np.float64).eval()
        perturb_parameters(model, rng)
        input_ids, attention_mask, labels = _masked_lm_batch(rng, config.vocab_size)
        sentence_order_label = rng.integers(0, 2, size=len(input_ids))
        return _check_model_loss(model, seed, input_ids=input_ids,
                                 attention_mask=attention_mask, labels=labels,
                                 sentence_order_label=sentence_order_label)

    yield "AlbertForPreTraining(3 layers sharing 1 block)", run


def electra_cases(seed: int = 0) -> Iterator[tuple[str, Callable[[], GradCheckTable]]]:
    """(name, thunk) for ELECTRA's discriminator (replaced-token detection on every real
    token) and generator (MLM, decoder tied to the word table), end to end with padding:
    tables of width E < H and embeddings_project."""
    from minibert.family.electra import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

    for cls in (ElectraForPreTraining, ElectraForMaskedLM):
        def run(cls=cls) -> GradCheckTable:
            rng = np.random.default_rng(seed)
            config = ElectraConfig(vocab_size=41, embedding_size=6, hidden_size=8,
                                   num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=12, max_position_embeddings=16,
                                   hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
            model = cls(config, seed=seed, dtype=np.float64).eval()
            perturb_parameters(model, rng)
            if cls is ElectraForPreTraining:
                batch, seq = 3, 8
                input_ids = rng.integers(1, config.vocab_size, size=(batch, seq))
                attention_mask = _padding_mask(rng, batch, seq)
                labels = rng.integers(0, 2, size=(batch, seq))  # 1 = replaced
            else:
                input_ids, attention_mask, labels = _masked_lm_batch(rng, config.vocab_size)

            def loss() -> float:
                return model(input_ids, None, attention_mask, labels=labels).loss

            return check_loss(model, loss, model.backward, seed=seed, max_entries=24)

        yield f"{cls.__name__}(E < H)", run


def run_all(seed: int = 0, include_model: bool = True,
            progress: Callable[[str], None] | None = None) -> tuple[GradCheckTable, list[str]]:
    """Run every case; returns one combined table and the names of failing rows."""
    table = GradCheckTable(title="minibert gradient checks (float64)")
    failures = []
    groups = [(function_cases(seed), SINGLE_LAYER_TOL), (module_cases(seed), SINGLE_LAYER_TOL)]
    if include_model:
        groups.append((model_cases(seed), MODEL_TOL))
        groups.append((albert_cases(seed), MODEL_TOL))
        groups.append((electra_cases(seed), MODEL_TOL))
    for cases, tol in groups:
        for name, thunk in cases:
            if progress is not None:
                progress(name)
            result = thunk()
            failures += [f"{name}/{row.name}" for row in result.failures(tol)]
            table.extend(result, prefix=f"{name}: ")
    return table, failures
