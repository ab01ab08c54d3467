"""The one-page BERT layer, under the name the notebooks and the assignment use.

The page is in ``minibert/model.py``: ``bert_layer_forward``, every step of one post-LN BERT
layer on its own line with its shape, kept in one named cache (``FlatLayerCache``), and
``bert_layer_backward``, every step under the forward line it inverts, from the
``functional`` pairs, with HF's parameter names (``LAYER_PARAMETERS``). ``BertLayer`` runs
that page, so the layer is written once; ``tests/core/test_flat_layer.py`` checks the page
against finite differences and against BertLayer, dropout and every activation included. The
derivations are in docs/backprop.md.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size (H / N),
I intermediate size.
"""

from __future__ import annotations

import numpy as np

from minibert.model import (
    LAYER_PARAMETERS,
    FlatLayerCache,
    bert_layer_backward,
    bert_layer_forward,
)

__all__ = ["LAYER_PARAMETERS", "FlatLayerCache", "bert_layer_forward", "bert_layer_backward",
           "layer_parameters"]


def layer_parameters(layer) -> dict[str, np.ndarray]:
    """The parameters of a ``BertLayer`` by the names of ``LAYER_PARAMETERS`` (the same
    arrays, not copies): the ``p`` its forward hands to the page."""
    return layer.page_parameters()
