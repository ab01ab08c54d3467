"""minibert.training.optim and .schedules against references written from the papers.

The references below are plain float64 transcriptions of the published update rules
(Kingma & Ba 2015 Algorithm 1 with Loshchilov & Hutter 2019's decoupled decay as torch
orders it; google-research/bert optimization.py), deliberately written differently from the
in-place code they check.
"""

import math
import tracemalloc

import numpy as np
import pytest

import minibert as mb
from minibert.layers import Module
from minibert.training.optim import (
    OPTIMIZERS,
    AdamW,
    AdamWeightDecay,
    adam_weight_decay_reference,
    adamw_reference,
    clip_grad_norm,
    make_optimizer,
    no_weight_decay,
)
from minibert.training.schedules import (
    ConstantSchedule,
    LinearWarmupDecaySchedule,
    WarmupStableDecaySchedule,
    make_schedule,
)

SHAPES = {
    "bert.embeddings.word_embeddings.weight": (11, 6),
    "bert.embeddings.LayerNorm.weight": (6,),
    "bert.embeddings.LayerNorm.bias": (6,),
    "bert.encoder.layer.0.attention.output.dense.weight": (6, 6),
    "bert.encoder.layer.0.attention.output.dense.bias": (6,),
    "bert.encoder.layer.0.attention.output.LayerNorm.weight": (6,),
    "bert.encoder.layer.0.attention.output.LayerNorm.bias": (6,),
    "cls.predictions.transform.layer_norm.weight": (6,),
    "cls.predictions.bias": (11,),
}
DECAY = {
    "bert.embeddings.word_embeddings.weight",
    "bert.encoder.layer.0.attention.output.dense.weight",
}


class FakeModel(Module):
    """A Module of a few parameters with HF names and their gradient buffers, like a BERT."""

    def __init__(self, seed=0, dtype=np.float64, shapes=SHAPES):
        super().__init__()
        rng = np.random.default_rng(seed)
        # Magnitudes in [0.5, 1.5] with random signs: away from 0 and 1 so a wrong factor shows.
        for name, shape in shapes.items():
            self.add_parameter(
                name, (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)).astype(dtype))

    def fill_gradients(self, grads):
        for name, grad in grads.items():
            self.grads[name][...] = grad


def random_gradients(rng, scale=1.0, shapes=SHAPES):
    return {name: rng.standard_normal(shape) * scale for name, shape in shapes.items()}


def reference_adamw(params, grad_steps, lrs, betas, eps, weight_decay, bias_correction=True):
    """Loshchilov & Hutter's AdamW as torch orders it, elementwise in float64."""
    beta1, beta2 = betas
    p = {n: v.astype(np.float64) for n, v in params.items()}
    m = {n: np.zeros_like(v) for n, v in p.items()}
    v = {n: np.zeros_like(x) for n, x in p.items()}
    for t, (grads, lr) in enumerate(zip(grad_steps, lrs, strict=True), start=1):
        for n in p:
            g = grads[n]
            if n in DECAY:
                p[n] = p[n] - lr * weight_decay * p[n]
            m[n] = beta1 * m[n] + (1 - beta1) * g
            v[n] = beta2 * v[n] + (1 - beta2) * g**2
            m_hat = m[n] / (1 - beta1**t) if bias_correction else m[n]
            v_hat = v[n] / (1 - beta2**t) if bias_correction else v[n]
            p[n] = p[n] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p, m, v


def reference_google(params, grad_steps, lrs, betas, eps, weight_decay):
    """google-research/bert AdamWeightDecayOptimizer.apply_gradients, in float64."""
    beta1, beta2 = betas
    p = {n: v.astype(np.float64) for n, v in params.items()}
    m = {n: np.zeros_like(v) for n, v in p.items()}
    v = {n: np.zeros_like(x) for n, x in p.items()}
    for grads, lr in zip(grad_steps, lrs, strict=True):
        for n in p:
            g = grads[n]
            m[n] = beta1 * m[n] + (1.0 - beta1) * g
            v[n] = beta2 * v[n] + (1.0 - beta2) * np.square(g)
            update = m[n] / (np.sqrt(v[n]) + eps)
            if n in DECAY:
                update += weight_decay * p[n]
            p[n] = p[n] - lr * update
    return p, m, v


def run(optimizer, model, grad_steps):
    for grads in grad_steps:
        model.fill_gradients(grads)
        optimizer.step()


# Linear schedule, peak 0.02, warmup 3, total 8, evaluated by hand: step / 3 then (8 - step) / 5.
LINEAR_LRS = [0.0, 0.02 / 3, 0.04 / 3, 0.02, 0.016, 0.012, 0.008, 0.004, 0.0, 0.0]


@pytest.mark.parametrize("bias_correction", [True, False])
def test_adamw_matches_reference(bias_correction):
    rng = np.random.default_rng(1)
    model = FakeModel(seed=2)
    start = {n: p.copy() for n, p in model.params.items()}
    grad_steps = [random_gradients(rng, scale) for scale in [1.0, 0.1, 3.0, 1.0, 0.5] * 2]
    schedule = LinearWarmupDecaySchedule(0.02, warmup_steps=3, total_steps=8)
    optimizer = AdamW(
        model, lr=schedule, betas=(0.8, 0.95), eps=1e-7, weight_decay=0.3,
        bias_correction=bias_correction,
    )  # fmt: skip
    run(optimizer, model, grad_steps)
    p, m, v = reference_adamw(
        start, grad_steps, LINEAR_LRS, (0.8, 0.95), 1e-7, 0.3, bias_correction
    )
    for name in SHAPES:
        np.testing.assert_allclose(model.params[name], p[name], rtol=1e-12, atol=0, err_msg=name)
        np.testing.assert_allclose(optimizer.exp_avg[name], m[name], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(optimizer.exp_avg_sq[name], v[name], rtol=1e-12, atol=0)
    assert optimizer.step_count == len(grad_steps)


def test_adam_weight_decay_matches_google_reference():
    rng = np.random.default_rng(3)
    model = FakeModel(seed=4)
    start = {n: p.copy() for n, p in model.params.items()}
    grad_steps = [random_gradients(rng, scale) for scale in [2.0, 0.2, 1.0, 1.0, 0.7, 5.0]]
    lrs = [0.01, 0.03, 0.002, 0.05, 0.01, 0.02]
    optimizer = AdamWeightDecay(model, lr=0.01, betas=(0.85, 0.99), weight_decay=0.2)
    for grads, lr in zip(grad_steps, lrs, strict=True):
        optimizer.schedule = ConstantSchedule(lr)
        model.fill_gradients(grads)
        optimizer.step()
    p, m, v = reference_google(start, grad_steps, lrs, (0.85, 0.99), 1e-6, 0.2)
    for name in SHAPES:
        np.testing.assert_allclose(model.params[name], p[name], rtol=1e-12, atol=0, err_msg=name)
        np.testing.assert_allclose(optimizer.exp_avg_sq[name], v[name], rtol=1e-12, atol=0)


def test_adamw_without_bias_correction_is_google_update():
    rng = np.random.default_rng(5)
    google_model, adamw_model = FakeModel(seed=6), FakeModel(seed=6)
    google = AdamWeightDecay(google_model, lr=0.01, eps=1e-6, weight_decay=0.1)
    adamw = AdamW(adamw_model, lr=0.01, eps=1e-6, weight_decay=0.1, bias_correction=False)
    for _ in range(6):
        grads = random_gradients(rng)
        run(google, google_model, [grads])
        run(adamw, adamw_model, [grads])
    for name in SHAPES:
        np.testing.assert_allclose(google_model.params[name], adamw_model.params[name], rtol=1e-14)


def test_bias_correction_changes_early_steps():
    rng = np.random.default_rng(7)
    corrected, plain = FakeModel(seed=8), FakeModel(seed=8)
    grads = random_gradients(rng)
    run(AdamW(corrected, lr=0.01), corrected, [grads])
    run(AdamW(plain, lr=0.01, bias_correction=False), plain, [grads])
    name = "bert.encoder.layer.0.attention.output.dense.bias"
    g, start = grads[name], FakeModel(seed=8).params[name]
    # After one step m = 0.1 g and v = 0.001 g^2: corrected, every weight moves by about
    # lr * sign(g); uncorrected, by about lr * 0.1 / sqrt(0.001) * sign(g) = 3.16 lr * sign(g).
    np.testing.assert_allclose(start - corrected.params[name], 0.01 * g / (abs(g) + 1e-8), 1e-12)
    np.testing.assert_allclose(
        start - plain.params[name], 0.01 * 0.1 * g / (math.sqrt(0.001) * abs(g) + 1e-8), 1e-12
    )


@pytest.mark.parametrize("cls", [AdamW, AdamWeightDecay])
def test_float32_updates_stay_float32_and_in_place(cls):
    rng = np.random.default_rng(9)
    model32, model64 = FakeModel(seed=10, dtype=np.float32), FakeModel(seed=10)
    opt32, opt64 = cls(model32, lr=0.01), cls(model64, lr=0.01)
    arrays = dict(model32.params)
    for _ in range(5):
        grads = {n: g.astype(np.float32) for n, g in random_gradients(rng).items()}
        run(opt32, model32, [grads])
        run(opt64, model64, [{n: g.astype(np.float64) for n, g in grads.items()}])
    for name, param in model32.params.items():
        assert param is arrays[name]
        assert param.dtype == np.float32
        assert opt32.exp_avg[name].dtype == np.float32
        assert opt32.exp_avg_sq[name].dtype == np.float32
        np.testing.assert_allclose(param, model64.params[name], rtol=2e-6, err_msg=name)


def test_decay_groups():
    optimizer = AdamW(FakeModel())
    assert set(optimizer.decay_names) == DECAY
    assert set(optimizer.no_decay_names) == set(SHAPES) - DECAY
    assert len(optimizer.decay_names) + len(optimizer.no_decay_names) == len(SHAPES)


@pytest.mark.parametrize(
    "name, excluded",
    [
        ("bert.encoder.layer.3.output.LayerNorm.weight", True),
        ("bert.encoder.layer.3.output.LayerNorm.bias", True),
        ("encoder.final_layer_norm.weight", True),
        ("bert.encoder.layer.3.attention.self.query.bias", True),
        ("cls.predictions.bias", True),
        ("bert.encoder.layer.3.attention.self.query.weight", False),
        ("bert.embeddings.word_embeddings.weight", False),
        ("bert.pooler.dense.weight", False),
        ("cls.bias_scale.weight", False),
    ],
)
def test_no_weight_decay_rule(name, excluded):
    assert no_weight_decay(name) is excluded


@pytest.mark.parametrize("cls", [AdamW, AdamWeightDecay])
def test_weight_decay_applies_only_to_decay_group(cls):
    # With zero gradients the Adam part is exactly 0, leaving only the decay.
    model = FakeModel(seed=11)
    start = {n: p.copy() for n, p in model.params.items()}
    optimizer = cls(model, lr=0.1, weight_decay=0.5)
    optimizer.step()
    for name in SHAPES:
        expected = start[name] * (1 - 0.05) if name in DECAY else start[name]
        np.testing.assert_allclose(model.params[name], expected, rtol=1e-15, atol=0)


def test_custom_no_decay_rule():
    model = FakeModel(seed=12)
    start = {n: p.copy() for n, p in model.params.items()}
    optimizer = AdamW(model, lr=0.1, weight_decay=0.5, no_decay=lambda name: False)
    assert optimizer.no_decay_names == ()
    optimizer.step()
    for name in SHAPES:
        np.testing.assert_allclose(model.params[name], start[name] * 0.95, rtol=1e-15, atol=0)


# One buffer for all parameters


def reference_steps(cls, model, grad_steps, lrs, **kwargs):
    """The per-array reference updates of ``cls`` on copies of ``model``'s parameters."""
    optimizer = cls(FakeModel(dtype=np.float32), **kwargs)  # for its defaults and groups
    params = {n: p.copy() for n, p in model.named_parameters()}
    m = {n: np.zeros_like(p) for n, p in params.items()}
    v = {n: np.zeros_like(p) for n, p in params.items()}
    for t, (grads, lr) in enumerate(zip(grad_steps, lrs, strict=True), start=1):
        for n in params:
            decay = optimizer.weight_decay if n in optimizer.decay_names else 0.0
            if cls is AdamW:
                adamw_reference(params[n], grads[n], m[n], v[n], lr, t, optimizer.betas,
                                optimizer.eps, decay, optimizer.bias_correction)
            else:
                adam_weight_decay_reference(params[n], grads[n], m[n], v[n], lr,
                                            optimizer.betas, optimizer.eps, decay)
    return params, m, v


@pytest.mark.parametrize("cls, kwargs", [(AdamW, {}), (AdamW, {"bias_correction": False}),
                                         (AdamWeightDecay, {})])
def test_flat_step_equals_the_per_array_reference_exactly(cls, kwargs):
    """Tolerance 0, in float32: the flat step applies the reference's elementwise +, -, *,
    / and sqrt, each correctly rounded in IEEE arithmetic, to the same operands in the same
    order; which array an element sits in cannot change its result."""
    rng = np.random.default_rng(27)
    model = FakeModel(seed=28, dtype=np.float32)
    grad_steps = [{n: g.astype(np.float32) for n, g in random_gradients(rng, scale).items()}
                  for scale in (1.0, 0.01, 30.0, 1.0, 0.3)]
    lrs = [0.0, 0.01, 0.03, 0.02, 0.01]
    expected = reference_steps(cls, model, grad_steps, lrs, weight_decay=0.3, **kwargs)
    optimizer = cls(model, weight_decay=0.3, **kwargs)
    for grads, lr in zip(grad_steps, lrs, strict=True):
        optimizer.schedule = ConstantSchedule(lr)
        run(optimizer, model, [grads])
    for name in SHAPES:
        for actual, reference in zip((model.params, optimizer.exp_avg, optimizer.exp_avg_sq),
                                     expected, strict=True):
            np.testing.assert_array_equal(actual[name], reference[name], err_msg=name)


def test_clip_of_the_flat_buffer_equals_the_per_array_clip():
    """The flat norm is one float64 dot product, the per-array norm a sum of one per array:
    the same squares summed in another order, equal to about 1e-16 relative. The scale
    factor is then rounded to float32, where so small a difference flips it by one unit
    in the last place at most, so the clipped gradients agree to one float32 ulp."""
    rng = np.random.default_rng(29)
    model = FakeModel(seed=30, dtype=np.float32)
    optimizer = AdamW(model)
    model.fill_gradients({n: g.astype(np.float32) for n, g in random_gradients(rng, 5).items()})
    copies = {n: g.copy() for n, g in model.grads.items()}
    expected = clip_grad_norm(copies, max_norm=1.0)
    assert clip_grad_norm(optimizer, max_norm=1.0) == pytest.approx(expected, rel=1e-15)
    for name, grad in model.grads.items():
        np.testing.assert_allclose(grad, copies[name], rtol=2.0**-23, atol=0, err_msg=name)
    model.grads["cls.predictions.bias"][3] = np.inf
    with pytest.raises(ValueError, match="NaN or inf in gradient 'cls.predictions.bias'"):
        clip_grad_norm(optimizer)


def test_a_bert_moves_into_one_buffer_and_computes_as_before():
    config = mb.BertConfig.preset("tiny", vocab_size=50, num_hidden_layers=1,
                                  max_position_embeddings=16, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    model, twin = mb.BertForPreTraining(config, seed=0), mb.BertForPreTraining(config, seed=0)
    rng = np.random.default_rng(31)
    ids = rng.integers(5, 50, size=(2, 8))
    labels = np.where(rng.random((2, 8)) < 0.3, ids, -100)
    labels[:, 1] = ids[:, 1]
    inputs = dict(input_ids=ids, labels=labels, next_sentence_label=np.array([0, 1]))
    before = model(**inputs).loss
    optimizer = AdamW(model, lr=1e-3)
    params, grads = dict(model.named_parameters()), dict(model.named_gradients())
    assert optimizer.flat_params.size == model.num_parameters() == twin.num_parameters()
    for name in params:
        assert params[name].base is optimizer.flat_params, name
        assert grads[name].base is optimizer.flat_grads, name
    # The MLM decoder reads the word embeddings through the Embedding module, so the tie
    # holds: one view, listed once, and the state dict's alias key is that same view.
    embeddings = model.bert.embeddings.word_embeddings
    assert model.cls.predictions.word_embeddings is embeddings
    assert model.state_dict()["cls.predictions.decoder.weight"] is embeddings.params["weight"]
    assert model(**inputs).loss == before
    # Three steps of the flat optimizer equal three per-array reference updates of the twin.
    moments = {n: (np.zeros_like(p), np.zeros_like(p)) for n, p in twin.named_parameters()}
    for step in range(1, 4):
        for net in (model, twin):
            net.zero_grad()
            net(**inputs)
            net.backward()
        optimizer.step()
        twin_grads = dict(twin.named_gradients())
        for name, param in twin.named_parameters():
            decay = optimizer.weight_decay if name in optimizer.decay_names else 0.0
            adamw_reference(param, twin_grads[name], *moments[name], 1e-3, step,
                            optimizer.betas, optimizer.eps, decay)
    for name, param in twin.named_parameters():
        np.testing.assert_array_equal(params[name], param, err_msg=name)


def test_a_second_optimizer_takes_the_model_over():
    model = FakeModel()
    first = AdamW(model)
    second = AdamW(model)
    second.step()
    with pytest.raises(ValueError, match="no longer the array the optimizer was built with"):
        first.step()


def test_zero_grad():
    model = FakeModel()
    optimizer = AdamW(model)
    model.fill_gradients(random_gradients(np.random.default_rng(15)))
    grad_arrays = dict(model.grads)
    optimizer.zero_grad()
    for name, grad in model.grads.items():
        assert grad is grad_arrays[name]
        assert not grad.any()


def test_make_optimizer():
    assert set(OPTIMIZERS) == {"adamw", "adam_weight_decay"}
    assert type(make_optimizer("adamw", FakeModel(), lr=0.1)) is AdamW
    google = make_optimizer("adam_weight_decay", FakeModel(), weight_decay=0.0)
    assert type(google) is AdamWeightDecay
    assert google.eps == 1e-6 and not google.bias_correction
    with pytest.raises(ValueError, match=r"name must be one of .*'adamw'.*got 'adam'"):
        make_optimizer("adam", FakeModel())


# Schedules


def test_linear_schedule_values():
    schedule = LinearWarmupDecaySchedule(0.02, warmup_steps=3, total_steps=8)
    for step, expected in enumerate(LINEAR_LRS):
        assert schedule.lr_at(step) == pytest.approx(expected, rel=1e-15, abs=0), step
    assert schedule.lr_at(0) == 0.0
    assert schedule.lr_at(3) == 0.02
    assert schedule.lr_at(8) == 0.0
    assert schedule.lr_at(10**6) == 0.0


def test_linear_schedule_without_warmup_and_all_warmup():
    no_warmup = LinearWarmupDecaySchedule(1.0, warmup_steps=0, total_steps=4)
    assert [no_warmup.lr_at(s) for s in range(6)] == [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    all_warmup = LinearWarmupDecaySchedule(1.0, warmup_steps=4, total_steps=4)
    assert [all_warmup.lr_at(s) for s in range(6)] == [0.0, 0.25, 0.5, 0.75, 0.0, 0.0]


def test_constant_schedule_and_make_schedule():
    assert [ConstantSchedule(0.3).lr_at(s) for s in (0, 1, 10**9)] == [0.3] * 3
    assert make_schedule("constant", 0.3).lr_at(7) == 0.3
    linear = make_schedule("linear", 0.02, warmup_steps=3, total_steps=8)
    assert [linear.lr_at(s) for s in range(10)] == pytest.approx(LINEAR_LRS, rel=1e-15)
    names = r"\('constant', 'linear', 'warmup_stable_decay'\)"
    with pytest.raises(ValueError, match=r"name must be one of " + names):
        make_schedule("cosine", 0.1, 1, 10)
    with pytest.raises(ValueError, match="total_steps must be given"):
        make_schedule("linear", 0.1, 1)


def test_warmup_stable_decay_values():
    # 2 warmup steps, a plateau, then 4 decay steps ending at total_steps = 10.
    schedule = WarmupStableDecaySchedule(0.8, warmup_steps=2, decay_steps=4, total_steps=10)
    assert [schedule.lr_at(s) for s in range(12)] == pytest.approx(
        [0.0, 0.4, 0.8, 0.8, 0.8, 0.8, 0.8, 0.6, 0.4, 0.2, 0.0, 0.0], rel=1e-15, abs=0)
    made = make_schedule("warmup_stable_decay", 0.8, warmup_steps=2, total_steps=10,
                         decay_steps=4)
    assert [made.lr_at(s) for s in range(12)] == [schedule.lr_at(s) for s in range(12)]
    # No decay is the constant rate after warmup; all decay is the linear schedule.
    flat = WarmupStableDecaySchedule(0.5, warmup_steps=0, decay_steps=0, total_steps=5)
    assert [flat.lr_at(s) for s in range(5)] == [0.5] * 5
    linear = LinearWarmupDecaySchedule(0.02, warmup_steps=3, total_steps=8)
    as_wsd = WarmupStableDecaySchedule(0.02, warmup_steps=3, decay_steps=5, total_steps=8)
    assert [as_wsd.lr_at(s) for s in range(10)] == [linear.lr_at(s) for s in range(10)]


@pytest.mark.parametrize("warmup, decay, total, match", [
    (3, 8, 10, "warmup_steps \\+ decay_steps must be <= total_steps"),
    (0, -1, 10, "decay_steps must be >= 0"),
    (0, 1, 0, "total_steps must be >= 1"),
    (0, 1.5, 10, "decay_steps must be an int"),
])
def test_warmup_stable_decay_refuses_bad_lengths(warmup, decay, total, match):
    with pytest.raises((ValueError, TypeError), match=match):
        WarmupStableDecaySchedule(0.1, warmup_steps=warmup, decay_steps=decay, total_steps=total)


def test_optimizer_follows_schedule_from_step_zero():
    rng = np.random.default_rng(16)
    model = FakeModel(seed=17)
    start = {n: p.copy() for n, p in model.params.items()}
    schedule = LinearWarmupDecaySchedule(0.02, warmup_steps=3, total_steps=8)
    optimizer = AdamW(model, lr=schedule)
    seen = []
    for _ in range(10):
        seen.append(optimizer.current_lr)
        run(optimizer, model, [random_gradients(rng)])
        if len(seen) == 1:
            # lr_at(0) == 0: the first update fills the moments but leaves the weights.
            for name in SHAPES:
                np.testing.assert_array_equal(model.params[name], start[name])
            assert np.abs(optimizer.exp_avg["cls.predictions.bias"]).min() > 0
    assert seen == [schedule.lr_at(s) for s in range(10)]


# Gradient clipping


def test_clip_grad_norm_scales_when_above():
    rng = np.random.default_rng(18)
    grads = random_gradients(rng, 3.0)
    before = {n: g.copy() for n, g in grads.items()}
    expected_total = math.sqrt(sum(float(np.sum(g**2)) for g in before.values()))
    total = clip_grad_norm(grads, max_norm=1.5)
    assert total == pytest.approx(expected_total, rel=1e-14)
    for name, grad in grads.items():
        np.testing.assert_allclose(grad, before[name] * 1.5 / (expected_total + 1e-6), 1e-14)
    new_total = math.sqrt(sum(float(np.sum(g**2)) for g in grads.values()))
    assert new_total == pytest.approx(1.5, rel=1e-6)
    assert new_total < 1.5


def test_clip_grad_norm_leaves_small_gradients_untouched():
    model = FakeModel()
    model.fill_gradients(random_gradients(np.random.default_rng(19), 0.01))
    before = {n: g.copy() for n, g in model.grads.items()}
    total = clip_grad_norm(model, max_norm=1.0)
    assert 0 < total < 1.0
    for name, grad in model.grads.items():
        np.testing.assert_array_equal(grad, before[name])


def test_clip_grad_norm_of_float32_is_summed_in_float64():
    rng = np.random.default_rng(20)
    grad = (rng.standard_normal(1_000_000) * 3).astype(np.float32)
    exact = math.sqrt(math.fsum(x * x for x in grad.astype(np.float64).tolist()))
    assert clip_grad_norm({"g": grad}, max_norm=1e9) == pytest.approx(exact, rel=1e-12)


def test_clip_grad_norm_rejects_non_finite():
    grads = random_gradients(np.random.default_rng(21))
    grads["bert.embeddings.LayerNorm.bias"][2] = np.nan
    with pytest.raises(ValueError, match="NaN or inf in gradient 'bert.embeddings.LayerNorm.bias'"):
        clip_grad_norm(grads)


# State


@pytest.mark.parametrize("name", ["adamw", "adam_weight_decay"])
def test_resume_from_state_dict_is_bit_identical(name):
    rng = np.random.default_rng(22)
    grad_steps = [random_gradients(rng, s).items() for s in rng.uniform(0.1, 3, size=12)]
    grad_steps = [{n: g.astype(np.float32) for n, g in steps} for steps in grad_steps]
    schedule = LinearWarmupDecaySchedule(0.02, warmup_steps=3, total_steps=10)

    model = FakeModel(seed=23, dtype=np.float32)
    optimizer = make_optimizer(name, model, lr=schedule)
    run(optimizer, model, grad_steps[:5])
    state = optimizer.state_dict()
    saved_params = {n: p.copy() for n, p in model.params.items()}
    run(optimizer, model, grad_steps[5:])

    resumed_model = FakeModel(seed=99, dtype=np.float32)
    for n, p in saved_params.items():
        resumed_model.params[n][...] = p
    resumed = make_optimizer(name, resumed_model, lr=schedule)
    resumed.load_state_dict(state)
    assert resumed.step_count == 5
    run(resumed, resumed_model, grad_steps[5:])
    for n in SHAPES:
        np.testing.assert_array_equal(resumed_model.params[n], model.params[n])
        np.testing.assert_array_equal(resumed.exp_avg_sq[n], optimizer.exp_avg_sq[n])


def test_state_dict_layout_and_copies():
    model = FakeModel(dtype=np.float32)
    optimizer = AdamW(model)
    model.fill_gradients(random_gradients(np.random.default_rng(24)))
    optimizer.step()
    state = optimizer.state_dict()
    expected = {"step"} | {f"{k}.{n}" for k in ("exp_avg", "exp_avg_sq") for n in SHAPES}
    assert set(state) == expected
    assert state["step"].dtype == np.int64 and state["step"].shape == () and state["step"] == 1
    for key, value in state.items():
        assert isinstance(value, np.ndarray)
        if key != "step":
            assert value.dtype == np.float32
            assert value.shape == SHAPES[key.split(".", 1)[1]]
    state["exp_avg.cls.predictions.bias"][...] = 123.0
    assert not np.any(optimizer.exp_avg["cls.predictions.bias"] == 123.0)


def _state_with(change):
    optimizer = AdamW(FakeModel())
    state = optimizer.state_dict()
    change(state)
    return optimizer, state


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s.pop("exp_avg_sq.cls.predictions.bias"), "missing key 'exp_avg_sq.cls.pre"),
        (lambda s: s.pop("step"), "missing key 'step'"),
        (lambda s: s.update({"exp_avg.extra": np.zeros(2)}), "unexpected key 'exp_avg.extra'"),
        (
            lambda s: s.update({"exp_avg.cls.predictions.bias": np.zeros(12)}),
            r"'exp_avg.cls.predictions.bias' must have shape \(11,\), got \(12,\)",
        ),
        (
            lambda s: s.update({"exp_avg_sq.cls.predictions.bias": -np.ones(11)}),
            "'exp_avg_sq.cls.predictions.bias' holds squared gradients and must be >= 0",
        ),
        (
            lambda s: s.update({"exp_avg.cls.predictions.bias": np.full(11, np.nan)}),
            "'exp_avg.cls.predictions.bias' must be finite",
        ),
        (
            lambda s: s.update({"exp_avg.cls.predictions.bias": np.zeros(11, dtype=np.int64)}),
            "'exp_avg.cls.predictions.bias' must be a floating-point numpy array",
        ),
        (lambda s: s.update({"step": np.array(-1)}), "'step' must be a 0-d integer array >= 0"),
        (lambda s: s.update({"step": np.array(1.5)}), "'step' must be a 0-d integer array >= 0"),
        (lambda s: s.update({"step": np.array([1])}), "'step' must be a 0-d integer array >= 0"),
    ],
)
def test_load_state_dict_rejects_bad_state(change, message):
    optimizer, state = _state_with(change)
    before = optimizer.state_dict()
    with pytest.raises(ValueError, match=message):
        optimizer.load_state_dict(state)
    after = optimizer.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)


# Bad input


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"lr": -1e-3}, ValueError, r"lr must be a finite number >= 0, got -0.001"),
        ({"lr": float("nan")}, ValueError, r"lr must be a finite number >= 0, got nan"),
        ({"lr": "0.1"}, TypeError, r"lr must be a real number, got str '0.1'"),
        ({"betas": (1.0, 0.999)}, ValueError,
         r"betas\[0\] must be a finite number >= 0.0 and < 1.0, got 1.0"),
        ({"betas": (0.9, -0.1)}, ValueError,
         r"betas\[1\] must be a finite number >= 0.0 and < 1.0, got -0.1"),
        ({"betas": 0.9}, TypeError, r"betas must be a pair \(beta1, beta2\), got 0.9"),
        ({"eps": 0.0}, ValueError, r"eps must be a finite number > 0, got 0.0"),
        ({"eps": -1e-8}, ValueError, r"eps must be a finite number > 0, got -1e-08"),
        ({"weight_decay": -0.01}, ValueError, r"weight_decay must be a finite number >= 0"),
        ({"bias_correction": 1}, TypeError, r"bias_correction must be True or False, got int 1"),
        ({"no_decay": ["bias"]}, TypeError, r"no_decay must be a callable name -> bool"),
    ],
)
def test_adamw_rejects_bad_hyperparameters(kwargs, error, message):
    with pytest.raises(error, match=message):
        AdamW(FakeModel(), **kwargs)


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((0.1, 11, 10), ValueError, r"warmup_steps must be >= 0 and <= 10, got 11"),
        ((0.1, 0, 0), ValueError, r"total_steps must be >= 1, got 0"),
        ((0.1, 0, -5), ValueError, r"total_steps must be >= 1, got -5"),
        ((0.1, -1, 10), ValueError, r"warmup_steps must be >= 0 and <= 10, got -1"),
        ((0.1, 1.5, 10), TypeError, r"warmup_steps must be an int, got float 1.5"),
        ((-0.1, 1, 10), ValueError, r"peak_lr must be a finite number >= 0, got -0.1"),
    ],
)
def test_linear_schedule_rejects_bad_arguments(args, error, message):
    with pytest.raises(error, match=message):
        LinearWarmupDecaySchedule(*args)


def test_schedules_reject_bad_steps():
    with pytest.raises(ValueError, match="step must be >= 0, got -1"):
        LinearWarmupDecaySchedule(0.1, 1, 10).lr_at(-1)
    with pytest.raises(TypeError, match="step must be an int, got float 2.0"):
        ConstantSchedule(0.1).lr_at(2.0)
    with pytest.raises(ValueError, match="lr must be a finite number >= 0, got -0.5"):
        ConstantSchedule(-0.5)


@pytest.mark.parametrize("max_norm", [0.0, -1.0, float("inf")])
def test_clip_grad_norm_rejects_bad_max_norm(max_norm):
    with pytest.raises(ValueError, match=rf"max_norm must be a finite number > 0, got {max_norm}"):
        clip_grad_norm(random_gradients(np.random.default_rng(25)), max_norm=max_norm)


def test_clip_grad_norm_rejects_bad_grads():
    with pytest.raises(TypeError, match="grads must be an optimizer, a model or a dict name -> "
                                        "array, got list"):
        clip_grad_norm([np.ones(3)])
    with pytest.raises(TypeError, match="gradient 'g' must be a floating-point numpy array"):
        clip_grad_norm({"g": np.ones(3, dtype=np.int64)})


def test_rejects_bad_models():
    with pytest.raises(TypeError, match="model must be a minibert Module .* got int"):
        AdamW(3)
    with pytest.raises(ValueError, match="model must have at least one parameter"):
        AdamW(Module())
    mixed = FakeModel()
    mixed.add_parameter("extra.weight", np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match=r"must share one dtype .* \['float32', 'float64'\]"):
        AdamW(mixed)
    misshaped = FakeModel()
    misshaped.grads["cls.predictions.bias"] = np.zeros(4)
    with pytest.raises(ValueError, match=r"gradient of 'cls.predictions.bias' must be an array "
                                         r"of the parameter's shape \(11,\)"):
        AdamW(misshaped)


def test_step_rejects_a_rebound_parameter():
    model = FakeModel()
    optimizer = AdamW(model)
    model.params["bert.embeddings.LayerNorm.weight"] = np.ones(6)
    with pytest.raises(ValueError, match="parameter 'bert.embeddings.LayerNorm.weight' is no lo"):
        optimizer.step()


def test_step_rejects_a_rebound_gradient():
    model = FakeModel()
    optimizer = AdamW(model)
    model.grads["cls.predictions.bias"] = np.zeros(11)
    with pytest.raises(ValueError, match="gradient 'cls.predictions.bias' is no longer the arr"):
        optimizer.step()


# Speed: the update must not allocate parameter-sized temporaries.


@pytest.mark.parametrize("cls", [AdamW, AdamWeightDecay])
def test_step_allocates_no_parameter_sized_arrays(cls):
    shapes = {"bert.embeddings.word_embeddings.weight": (4000, 64), "dense.bias": (64,)}
    model = FakeModel(dtype=np.float32, shapes=shapes)
    model.fill_gradients(random_gradients(np.random.default_rng(26), shapes=shapes))
    optimizer = cls(model, lr=0.01)
    optimizer.step()
    tracemalloc.start()
    try:
        optimizer.step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    largest = model.params["bert.embeddings.word_embeddings.weight"].nbytes
    assert peak < largest / 20, (peak, largest)


# The update by parts (ZeRO-1: each data-parallel worker updates one chunk) and shared buffers


@pytest.mark.parametrize("cls", [AdamW, AdamWeightDecay])
def test_steps_by_parts_on_shared_buffers_equal_one_whole_step(cls, monkeypatch):
    """Three optimizers on one set of shared buffers, each updating its chunk
    (``step(part)``), give the bits of one optimizer's whole step. Blocks of 7 values
    force blocks that end inside a chunk and chunks that straddle the decay group."""
    from minibert.training.parallel import chunk_bounds

    monkeypatch.setattr(AdamW, "_block", 7)
    rng = np.random.default_rng(41)
    grad_steps = [{n: g.astype(np.float32) for n, g in random_gradients(rng, s).items()}
                  for s in (1.0, 0.1, 3.0)]
    whole_model = FakeModel(seed=42, dtype=np.float32)
    whole = cls(whole_model, lr=0.01, weight_decay=0.2)
    size = whole.flat_params.size
    shared = {key: np.zeros(size, np.float32) for key in ("params", "exp_avg", "exp_avg_sq")}
    shared["params"][...] = whole.flat_params
    parts = chunk_bounds(size, 3)
    models = [FakeModel(seed=99, dtype=np.float32) for _ in parts]  # other values: replaced
    optimizers = [cls(model, lr=0.01, weight_decay=0.2,
                      buffers={**shared, "grads": np.zeros(size, np.float32)})
                  for model in models]
    for model in models:  # the models took the buffer's weights over
        for name in SHAPES:
            np.testing.assert_array_equal(model.params[name], whole_model.params[name])
    for grads in grad_steps:
        whole_model.fill_gradients(grads)
        whole.step()
        for model, optimizer, part in zip(models, optimizers, parts, strict=True):
            model.fill_gradients(grads)
            optimizer.step(part)
    for key, flat in (("params", whole.flat_params), ("exp_avg", whole.flat_exp_avg),
                      ("exp_avg_sq", whole.flat_exp_avg_sq)):
        np.testing.assert_array_equal(shared[key], flat, err_msg=key)
    assert all(optimizer.step_count == 3 for optimizer in optimizers)


def test_buffers_must_fit_the_model():
    model = FakeModel(dtype=np.float32)
    size = sum(math.prod(shape) for shape in SHAPES.values())
    good = {key: np.zeros(size, np.float32)
            for key in ("params", "grads", "exp_avg", "exp_avg_sq")}
    with pytest.raises(ValueError, match="exactly 'params', 'grads'"):
        AdamW(model, buffers={"params": good["params"]})
    with pytest.raises(ValueError, match=rf"out must hold two flat arrays of shape \({size},\)"):
        AdamW(model, buffers={**good, "grads": np.zeros(size + 1, np.float32)})
    with pytest.raises(ValueError, match=r"buffers\['exp_avg'\] must be like"):
        AdamW(FakeModel(dtype=np.float32), buffers={**good, "exp_avg": np.zeros(size)})
