"""Gradient checking: is each hand-written backward pass the derivative of its forward?

``check`` holds the tools (relative error, centred finite differences, the checkers for
a function pair, a Module and a whole model's loss); ``suite`` holds the cases that
``python -m minibert gradcheck`` runs for every layer and the whole model.
"""

from minibert.gradcheck.check import (
    GradCheckRow,
    GradCheckTable,
    check_function,
    check_loss,
    check_module,
    numerical_gradient,
    rel_error,
)

__all__ = [
    "GradCheckRow", "GradCheckTable",
    "check_function", "check_loss", "check_module", "numerical_gradient", "rel_error",
]
