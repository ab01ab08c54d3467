"""Learning-rate schedules: the learning rate as a function of the number of steps taken.

A schedule is any object with ``lr_at(step) -> float``. ``step`` counts the optimizer
updates already made, so the first update uses ``lr_at(0)``, the second ``lr_at(1)``.
This is how ``torch.optim.lr_scheduler.LambdaLR`` behaves when ``scheduler.step()`` follows
``optimizer.step()``, and so how HuggingFace ``get_linear_schedule_with_warmup`` is used.
See docs/optim.md for the formulas and a comparison with Google BERT's schedule.
"""

from __future__ import annotations

from minibert.checks import check_int, check_real

__all__ = ["ConstantSchedule", "LinearWarmupDecaySchedule", "WarmupStableDecaySchedule",
           "make_schedule", "SCHEDULES"]


class ConstantSchedule:
    """The same learning rate at every step.

    Inputs: lr, a finite float >= 0.
    """

    def __init__(self, lr: float):
        self.lr = check_real("lr", lr, 0)

    def lr_at(self, step: int) -> float:
        """Learning rate for the update made after ``step`` updates (step >= 0)."""
        check_int("step", step, minimum=0)
        return self.lr

    def __repr__(self) -> str:
        return f"ConstantSchedule(lr={self.lr!r})"


class LinearWarmupDecaySchedule:
    """Linear warmup from 0 to ``peak_lr``, then linear decay to 0 at ``total_steps``.

    The formula of HuggingFace ``get_linear_schedule_with_warmup``, multiplied by peak_lr,
    with W = warmup_steps and S = total_steps:

        step <  W:  peak_lr * step / max(1, W)
        step >= W:  peak_lr * max(0, (S - step) / max(1, S - W))

    So ``lr_at(0) == 0`` when there is a warmup (the first update only fills Adam's moment
    estimates), ``lr_at(warmup_steps) == peak_lr``, and every step from ``total_steps`` on
    gives 0.

    Inputs: peak_lr, a finite float >= 0; warmup_steps, an int in [0, total_steps];
    total_steps, an int > 0.
    """

    def __init__(self, peak_lr: float, warmup_steps: int, total_steps: int):
        self.peak_lr = check_real("peak_lr", peak_lr, 0)
        self.total_steps = check_int("total_steps", total_steps, minimum=1)
        self.warmup_steps = check_int("warmup_steps", warmup_steps, minimum=0,
                                      maximum=self.total_steps)

    def lr_at(self, step: int) -> float:
        """Learning rate for the update made after ``step`` updates (step >= 0)."""
        step = check_int("step", step, minimum=0)
        if step < self.warmup_steps:
            return self.peak_lr * (step / max(1, self.warmup_steps))
        decay_steps = max(1, self.total_steps - self.warmup_steps)
        return self.peak_lr * max(0.0, (self.total_steps - step) / decay_steps)

    def __repr__(self) -> str:
        return (
            f"LinearWarmupDecaySchedule(peak_lr={self.peak_lr!r}, "
            f"warmup_steps={self.warmup_steps}, total_steps={self.total_steps})"
        )


class WarmupStableDecaySchedule:
    """Linear warmup to ``peak_lr``, a long plateau at it, then a linear decay to 0.

    With W = warmup_steps, D = decay_steps and S = total_steps (the decay starts at S - D):

        step <  W:          peak_lr * step / max(1, W)
        W <= step < S - D:  peak_lr
        step >= S - D:      peak_lr * max(0, (S - step) / max(1, D))

    HuggingFace calls this shape "warmup_stable_decay" (``get_wsd_schedule``, here with a
    linear decay to 0). It keeps the constant rate's fast progress for most of a short run
    and still ends with the small steps that a decay gives; see docs/optim.md.

    Inputs: peak_lr, a finite float >= 0; warmup_steps and decay_steps, ints >= 0 whose sum
    is at most total_steps; total_steps, an int > 0.
    """

    def __init__(self, peak_lr: float, warmup_steps: int, decay_steps: int, total_steps: int):
        self.peak_lr = check_real("peak_lr", peak_lr, 0)
        self.total_steps = check_int("total_steps", total_steps, minimum=1)
        self.warmup_steps = check_int("warmup_steps", warmup_steps, minimum=0)
        self.decay_steps = check_int("decay_steps", decay_steps, minimum=0)
        if self.warmup_steps + self.decay_steps > self.total_steps:
            raise ValueError(
                f"warmup_steps + decay_steps must be <= total_steps ({self.total_steps}), "
                f"got {warmup_steps!r} + {decay_steps!r}"
            )

    def lr_at(self, step: int) -> float:
        """Learning rate for the update made after ``step`` updates (step >= 0)."""
        step = check_int("step", step, minimum=0)
        if step < self.warmup_steps:
            return self.peak_lr * (step / max(1, self.warmup_steps))
        decay_start = self.total_steps - self.decay_steps
        if step < decay_start:
            return self.peak_lr
        return self.peak_lr * max(0.0, (self.total_steps - step) / max(1, self.decay_steps))

    def __repr__(self) -> str:
        return (
            f"WarmupStableDecaySchedule(peak_lr={self.peak_lr!r}, "
            f"warmup_steps={self.warmup_steps}, decay_steps={self.decay_steps}, "
            f"total_steps={self.total_steps})"
        )


SCHEDULES = ("constant", "linear", "warmup_stable_decay")


def make_schedule(name: str, lr: float, warmup_steps: int = 0, total_steps: int | None = None,
                  decay_steps: int = 0):
    """Build a schedule by its HuggingFace name.

    Inputs: name, "constant", "linear" or "warmup_stable_decay"; lr, the constant or peak
    learning rate; warmup_steps and total_steps, used by "linear" and
    "warmup_stable_decay" (total_steps required there); decay_steps, the length of
    "warmup_stable_decay"'s final decay.
    Outputs: an object with ``lr_at(step) -> float``.
    """
    if name == "constant":
        return ConstantSchedule(lr)
    if name in ("linear", "warmup_stable_decay") and total_steps is None:
        raise ValueError(f"total_steps must be given for the {name!r} schedule, got None")
    if name == "linear":
        return LinearWarmupDecaySchedule(lr, warmup_steps, total_steps)
    if name == "warmup_stable_decay":
        return WarmupStableDecaySchedule(lr, warmup_steps, decay_steps, total_steps)
    raise ValueError(f"name must be one of {SCHEDULES}, got {name!r}")
