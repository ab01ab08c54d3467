"""Training: the optimizer, learning-rate schedules, one training step, the two jobs.

- ``optim``: AdamW and Google BERT's AdamWeightDecay over one flat parameter buffer,
  global gradient clipping; ``schedules``: learning rate as a function of the step.
- ``loop``: ``train_step`` (the one update both jobs make) and ``eval_mode``.
- ``pretrain``: the MLM + NSP job and its ``Trainer``, with its settings
  (``pretrain_config``), data (``pretrain_data``) and held-out evaluation (``pretrain_eval``).
- ``finetune``: a task head trained on a toy task; ``metrics``: its scores and span decoding.
"""
