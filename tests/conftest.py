"""Fixtures shared by the whole suite."""

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
