#!/bin/sh
# Data parallelism on a many-core machine: the step at the demo's shape for one process
# (1 thread, and 12 threads), 1 / 2 / 4 / 8 / 12 workers (and MPI ranks where mpiexec and
# mpi4py are installed), then the demo itself with --workers 8. Writes JSON into $OUT
# (default ./out/scaling); prints each file as it is written.
#
#     OUT=out/scaling sh benchmarks/parallel_scaling.sh
set -u
OUT=${OUT:-out/scaling}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
{ date -u; nproc; "$PY" -c "import numpy, sys; print(sys.version.split()[0], 'numpy', numpy.__version__)"
  "$PY" -c "import numpy; numpy.show_config()" 2>/dev/null | grep -iE "openblas|mkl|name" | head -4
  command -v mpiexec; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
MPI=""
if command -v mpiexec >/dev/null 2>&1 && "$PY" -c "import mpi4py.MPI" >/dev/null 2>&1; then
    MPI="--mpi"
fi
timeout 200 "$PY" benchmarks/parallel_step.py --steps 15 --counts 1,2,4,8,12 $MPI \
    --out "$OUT/step.json" 2>&1 | tee "$OUT/step.txt"
timeout 240 "$PY" -m minibert.demo --out "$OUT/demo8" --workers 8 > "$OUT/demo8.txt" 2>&1
tail -25 "$OUT/demo8.txt"
cp "$OUT/demo8/metrics.json" "$OUT/demo8_metrics.json" 2>/dev/null
rm -rf "$OUT/demo8"
ls -la "$OUT"
