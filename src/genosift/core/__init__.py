"""The ground floor: what every other part of genosift stands on, and imports nothing of them.

Validation of inputs and parameters (``validation``), messages that name their fix
(``messages``), the engine of chunked and parallel work (``engine``), the numba kernels of class
moments and sparse structures (``kernels``, ``sparse_kernels``, ``sparse_check``,
``sparse_columns``, ``distinct``), exact number text (``number_text``, ``tabletext``), files
written whole (``files``), presence/absence (``transforms``) and the names of models and metrics
(``choices``). The mergeable statistics are ``genosift.stats``, on the same floor.
"""
