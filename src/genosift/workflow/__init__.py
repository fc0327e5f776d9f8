"""The modelling workflow: select features and fit a model over a grid of k, honestly evaluated.

``evaluate`` scores the features inside each training fold only (never on the samples it is
tested on), fits a model on the top k of that fold's ranking for every k of the grid, and
measures it on the held-out samples; then it refits the ranking and the model on all training
samples at the best k. ``write_results`` writes the tables, the final model and its provenance
to a folder, which ``genosift report`` turns into figures; ``predict`` applies a saved model to
new data.

Models: ``"logistic"`` (L2 logistic regression on standardised features), ``"random_forest"``
and ``"linear_svm"`` (on standardised features; no class probabilities).
"""
from .evaluation import Evaluation, evaluate
from .models import METRICS, MODELS, make_model  # noqa: F401  (METRICS: the metrics evaluate measures)
from .prediction import held_out_metrics, predict
from .results import load_model, write_results

__all__ = ["MODELS", "Evaluation", "evaluate", "held_out_metrics", "load_model", "make_model", "predict",
           "write_results"]
