"""genosift's version, in one place: the package (``genosift.__version__``), its build
(``pyproject.toml`` reads it) and every file genosift writes take it from here."""

__version__ = "0.1.0"
