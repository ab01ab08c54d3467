"""Fixtures shared by the whole suite, and the ``jobs`` mark of ``make test-fast``."""

import numpy as np
import pytest
import small_models

# The test files that run whole jobs: training runs and the command line in subprocesses,
# worker processes, MPI and signals, the assignment's grader, a browser, the notebooks, the
# explorer's pages, the slides and the benchmarks; and, in other files, the tests that
# pretrain. They get the ``jobs`` mark; ``make test-fast`` (-m "not slow and not parity
# and not jobs") leaves them out, ``make test`` and CI run them.
JOB_FILES = frozenset({
    "test_assignment.py", "test_assignment_grading.py", "test_assignment_mistakes.py",
    "test_benchmarks.py", "test_cli.py", "test_cli_inputs.py", "test_cli_runs.py",
    "test_distill.py", "test_explore.py", "test_explore_browser.py", "test_finetune.py",
    "test_fuzz.py",
    "test_mpi.py", "test_notebook_figures.py", "test_notebooks_layers.py",
    "test_notebooks_pipeline.py", "test_parallel.py", "test_reference.py", "test_signals.py",
    "test_site.py", "test_slides.py", "test_trainer.py",
})
JOB_TESTS = frozenset({
    "test_cli_pretrain_and_fill_mask_with_albert",
    "test_pretrain_electra_writes_both_folders_and_resumes_bit_identically",
    "test_pretraining_with_albert_runs_resumes_and_loads",
})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in JOB_FILES or item.originalname in JOB_TESTS:
            item.add_marker(pytest.mark.jobs)


@pytest.fixture
def attention_batch():
    """Two examples of TOKENS, the second with four more padded positions."""
    rng = np.random.default_rng(1234)
    mask = np.ones((2, len(small_models.TOKENS)))
    mask[:, small_models.N_REAL:] = 0
    mask[1, small_models.N_REAL - 4:] = 0
    attentions = small_models.softmax_attentions(rng, n_layers=3, batch=2, n_heads=4, mask=mask)
    return attentions, mask
