"""Embedding models: the bundled Model2Vec model, its memory-mapped reader, the numpy-free query encoder and int8 quantisation."""
