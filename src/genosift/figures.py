"""``genosift.figures``: the report's figures (:mod:`genosift.report.figures`) by their shorter name."""
from .report import figures as _figures


def __getattr__(name):
    return getattr(_figures, name)


def __dir__():
    return dir(_figures)
