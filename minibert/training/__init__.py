"""Training: the optimizer, learning-rate schedules, pretraining and fine-tuning jobs."""
