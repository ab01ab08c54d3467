"""Fixtures shared by the whole suite."""

import numpy as np
import pytest
import small_models


@pytest.fixture
def small_config():
    """Factory: ``small_config(**overrides)``, the small BertConfig every model test uses."""
    return small_models.small_config


@pytest.fixture
def make_batch():
    """Factory: ``make_batch(config, lengths=(9, 6, 4))``, a padded pretraining batch."""
    return small_models.make_batch


@pytest.fixture
def attention_batch():
    """Two examples of TOKENS, the second with four more padded positions."""
    rng = np.random.default_rng(1234)
    mask = np.ones((2, len(small_models.TOKENS)))
    mask[:, small_models.N_REAL:] = 0
    mask[1, small_models.N_REAL - 4:] = 0
    attentions = small_models.softmax_attentions(rng, n_layers=3, batch=2, n_heads=4, mask=mask)
    return attentions, mask
