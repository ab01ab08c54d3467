"""minibert.training.optim against torch.optim.AdamW, LambdaLR and clip_grad_norm_, step by step."""

import numpy as np
import pytest
from small_models import relative_difference

from minibert.layers import Module
from minibert.training.optim import AdamW, clip_grad_norm
from minibert.training.schedules import LinearWarmupDecaySchedule

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

SHAPES = {
    "bert.embeddings.word_embeddings.weight": (50, 16),
    "bert.embeddings.LayerNorm.weight": (16,),
    "bert.embeddings.LayerNorm.bias": (16,),
    "bert.encoder.layer.0.attention.self.query.weight": (16, 16),
    "bert.encoder.layer.0.attention.self.query.bias": (16,),
    "bert.encoder.layer.0.attention.output.dense.weight": (16, 16),
    "bert.encoder.layer.0.attention.output.dense.bias": (16,),
    "bert.encoder.layer.0.attention.output.LayerNorm.weight": (16,),
    "bert.encoder.layer.0.attention.output.LayerNorm.bias": (16,),
    "cls.predictions.bias": (50,),
}
TOLERANCE = {np.float64: 1e-12, np.float32: 1e-6}


class FakeModel(Module):
    """A Module of named parameters and gradient buffers with HF names, like a BERT."""

    def __init__(self, rng, dtype):
        super().__init__()
        # Magnitudes in [0.5, 1.5], random signs: away from 0 so relative errors mean something.
        for name, shape in SHAPES.items():
            self.add_parameter(
                name, (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)).astype(dtype))


def hf_linear_lambda(step, warmup_steps, total_steps):
    """The multiplier of transformers' get_linear_schedule_with_warmup, written from its docs."""
    if step < warmup_steps:
        return float(step) / float(max(1, warmup_steps))
    return max(0.0, float(total_steps - step) / float(max(1, total_steps - warmup_steps)))


def torch_groups(torch_params, weight_decay):
    """Decay / no-decay groups the way HF's example training scripts build them."""
    no_decay = ["bias", "LayerNorm.weight"]
    decay = [p for n, p in torch_params.items() if not any(nd in n for nd in no_decay)]
    plain = [p for n, p in torch_params.items() if any(nd in n for nd in no_decay)]
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": plain, "weight_decay": 0.0},
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adamw_with_schedule_and_clipping_matches_torch(dtype):
    rng = np.random.default_rng(0)
    model = FakeModel(rng, dtype)
    torch_params = {
        n: torch.nn.Parameter(torch.from_numpy(p.copy())) for n, p in model.params.items()
    }
    peak_lr, warmup_steps, total_steps, weight_decay = 3e-3, 5, 25, 0.1
    betas, eps, max_norm = (0.9, 0.98), 1e-6, 1.0

    reference = torch.optim.AdamW(
        torch_groups(torch_params, weight_decay), lr=peak_lr, betas=betas, eps=eps
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        reference, lambda step: hf_linear_lambda(step, warmup_steps, total_steps)
    )
    schedule = LinearWarmupDecaySchedule(peak_lr, warmup_steps, total_steps)
    optimizer = AdamW(model, lr=schedule, betas=betas, eps=eps, weight_decay=weight_decay)
    assert {id(p) for p in reference.param_groups[1]["params"]} == {
        id(torch_params[n]) for n in optimizer.no_decay_names
    }

    tol = TOLERANCE[dtype]
    for step in range(total_steps + 2):
        # Scales on both sides of max_norm, so some steps clip and some do not.
        scale = rng.choice([0.01, 0.1, 1.0, 10.0])
        for name, param in torch_params.items():
            grad = (rng.standard_normal(SHAPES[name]) * scale).astype(dtype)
            model.grads[name][...] = grad
            param.grad = torch.from_numpy(grad.copy())

        total = clip_grad_norm(optimizer, max_norm)  # the flat buffer, as train_step clips
        torch_total = torch.nn.utils.clip_grad_norm_(list(torch_params.values()), max_norm)
        assert total == pytest.approx(torch_total.item(), rel=tol, abs=0), step
        for name, param in torch_params.items():
            np.testing.assert_allclose(model.grads[name], param.grad.numpy(), rtol=tol, atol=0)

        assert optimizer.current_lr == pytest.approx(reference.param_groups[0]["lr"], rel=1e-15)
        optimizer.step()
        reference.step()
        scheduler.step()

        for name, param in torch_params.items():
            np.testing.assert_allclose(
                model.params[name], param.detach().numpy(), rtol=tol, atol=0,
                err_msg=f"{name} after step {step + 1}",
            )  # fmt: skip
            state = reference.state[param]
            assert relative_difference(optimizer.exp_avg[name], state["exp_avg"].numpy()) < tol
            assert relative_difference(optimizer.exp_avg_sq[name],
                                       state["exp_avg_sq"].numpy()) < tol
            assert optimizer.step_count == int(state["step"].item())


def learning_rates(optimizer, scheduler, steps):
    """The learning rate each of ``steps`` torch updates uses."""
    lrs = []
    for _ in range(steps):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return lrs


SCHEDULE_CASES = [(0, 7), (3, 10), (10, 10), (1, 1)]


@pytest.mark.parametrize("warmup_steps, total_steps", SCHEDULE_CASES)
def test_linear_schedule_matches_lambda_lr(warmup_steps, total_steps):
    schedule = LinearWarmupDecaySchedule(5e-4, warmup_steps, total_steps)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=5e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: hf_linear_lambda(step, warmup_steps, total_steps)
    )
    expected = learning_rates(optimizer, scheduler, total_steps + 3)
    assert [schedule.lr_at(step) for step in range(total_steps + 3)] == expected


@pytest.mark.parametrize("warmup_steps, total_steps", SCHEDULE_CASES)
def test_linear_schedule_matches_transformers(warmup_steps, total_steps):
    transformers = pytest.importorskip("transformers")
    schedule = LinearWarmupDecaySchedule(5e-4, warmup_steps, total_steps)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=5e-4)
    scheduler = transformers.get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
    expected = learning_rates(optimizer, scheduler, total_steps + 3)
    assert [schedule.lr_at(step) for step in range(total_steps + 3)] == expected


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [0.001, 5.0])
def test_clip_grad_norm_matches_torch(dtype, scale):
    rng = np.random.default_rng(1)
    grads = {n: (rng.standard_normal(s) * scale).astype(dtype) for n, s in SHAPES.items()}
    params = []
    for grad in grads.values():
        param = torch.nn.Parameter(torch.zeros(grad.shape, dtype=torch.from_numpy(grad).dtype))
        param.grad = torch.from_numpy(grad.copy())
        params.append(param)
    total = clip_grad_norm(grads, max_norm=0.5)
    torch_total = torch.nn.utils.clip_grad_norm_(params, max_norm=0.5)
    tol = TOLERANCE[dtype]
    assert total == pytest.approx(torch_total.item(), rel=tol, abs=0)
    for grad, param in zip(grads.values(), params, strict=True):
        np.testing.assert_allclose(grad, param.grad.numpy(), rtol=tol, atol=0)
