"""The bundled demo data: the Golub et al. (1999) ALL/AML leukemia training set."""
from __future__ import annotations

from importlib.resources import files

import numpy as np


def _golub_file(name):
    return files("genosift").joinpath("data", "golub", name)


def load_golub():
    """The Golub ALL/AML training set, as preprocessed by Dudoit et al. (2002).

    38 bone-marrow samples (27 ALL, 11 AML) x 3051 gene-expression probes. Data from the
    Bioconductor package multtest (LGPL-3+); see ``genosift/data/golub/COPYRIGHT``.
    Golub et al., Science 286:531-537 (1999).

    Returns
    -------
    X : ndarray (38, 3051) float64
    y : ndarray (38,) of str, 'ALL' or 'AML'
    feature_names : ndarray (3051,) of str, Affymetrix probe ids
    """
    with _golub_file("X.npz").open("rb") as fh:
        X = np.load(fh)["X"]
    y = np.array(_golub_file("y.txt").read_text().split())
    names = np.array(_golub_file("features.txt").read_text().splitlines(), dtype=object)
    return X, y, names


def golub_descriptions():
    """Probe id -> gene description for the Golub probes."""
    out = {}
    lines = _golub_file("descriptions.txt").read_text().splitlines()
    probes = _golub_file("features.txt").read_text().splitlines()
    for probe, line in zip(probes, lines):
        out[probe] = line[len(probe):].strip() if line.startswith(probe) else line.strip()
    return out
