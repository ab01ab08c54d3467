"""BERT's relatives, built from BERT's own layers and machinery.

- ``family.albert``: ALBERT (Lan et al., 2020), factorised embeddings and one set of layer
  weights shared by every layer, sentence-order prediction;
- ``family.distilbert``: DistilBERT (Sanh et al., 2019), half the layers, no token types,
  no pooler;
- ``family.distillation``: how a DistilBERT student learns from a BERT teacher.
"""
