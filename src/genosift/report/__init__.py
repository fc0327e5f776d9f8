"""The HTML report of a results folder written by ``genosift evaluate``: ``load_results`` reads
and checks its tables (``results``), ``make_report`` draws the figures (``figures``) and writes
them with one self-contained page (``html``). The writers of tables and JSON live in
``genosift.core.files`` and are re-exported here."""
from ..core.choices import METRICS
from ..core.files import fresh_folder, write_json, write_table
from .make import FIGURE_NAMES, Report, make_report
from .results import Results, load_results

__all__ = ["FIGURE_NAMES", "METRICS", "Report", "Results", "fresh_folder", "load_results", "make_report",
           "write_json", "write_table"]
