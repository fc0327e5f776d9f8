"""One public function per command: what ``genosift`` runs, callable from a notebook too.

Each job takes its inputs as plain values (the labelled samples as a ``Samples``, the
covariates as a ``Covariates``), checks every option and output before it reads a file, writes
its outputs atomically, and returns an object that says what it did (its ``lines`` are what the
command prints). No job speaks of command-line options: their messages name parameters, which
the command line spells as its options.

>>> import genosift as gs
>>> from genosift.jobs import Samples
>>> run = gs.jobs.score(Samples("data.gs.h5ad", target="resistant"), "ranking.tsv", top=100)  # doctest: +SKIP
"""
from .annotate import Annotated, annotate
from .convert import Converted, Demo, convert, demo
from .enet import EnetRun, enet
from .heritability import Heritable, heritability
from .inputs import Covariates, Samples
from .knockoffs import KnockoffRun, knockoffs
from .models import Evaluated, Predicted, Reported, evaluate, predict, report
from .pairs import PairRanking, pairs
from .pangenome import PangenomeRun, pangenome
from .patterns import PatternCount, patterns
from .plots import Plotted, plot
from .ranking import Ranking, Rankings, score, select

__all__ = ["Annotated", "Converted", "Covariates", "Demo", "EnetRun", "Evaluated", "Heritable", "KnockoffRun",
           "PairRanking", "PangenomeRun", "PatternCount", "Plotted", "Predicted", "Ranking", "Rankings", "Reported",
           "Samples", "annotate", "convert", "demo", "enet", "evaluate", "heritability", "knockoffs", "pairs",
           "pangenome", "patterns", "plot", "predict", "report", "score", "select"]
