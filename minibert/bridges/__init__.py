"""Optional bridges to real distributed engines; ``import minibert`` loads none of them.

- ``minibert.bridges.torch_ddp``: the same batches trained by HuggingFace's BERT under
  PyTorch DistributedDataParallel (the parity extra: torch, transformers).
- ``minibert.bridges.mpi``: minibert's own model trained on MPI ranks, one or many
  machines (``mpiexec -n N python -m minibert pretrain ...``; the mpi extra: mpi4py and
  an MPI library).

Each module imports its engine only when used, and says in one line what is missing.
See docs/parallel.md.
"""
