"""Data to try genosift on: the bundled Golub et al. (1999) ALL/AML leukemia training set, and
synthetic k-mer count files of any size with planted marker k-mers."""
from __future__ import annotations

from importlib.resources import files

import numpy as np
from numba import njit


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


@njit(cache=True)
def _format_lines(kmers, present, counts, ids, id_len, out):
    """``KMER | ID:COUNT ...`` lines into ``out`` (bytes; ``counts``: one per present entry, row by row);
    returns the bytes written."""
    pos = 0
    e = 0
    m, n = present.shape
    for i in range(m):
        for t in range(kmers.shape[1]):
            out[pos] = kmers[i, t]
            pos += 1
        out[pos] = 32
        out[pos + 1] = 124
        pos += 2
        for s in range(n):
            if present[i, s]:
                out[pos] = 32
                pos += 1
                for t in range(id_len):
                    out[pos] = ids[s, t]
                    pos += 1
                out[pos] = 58
                pos += 1
                c = counts[e]
                e += 1
                digits = 1
                while c >= 10 ** digits:
                    digits += 1
                for d in range(digits - 1, -1, -1):
                    out[pos + d] = 48 + c % 10
                    c //= 10
                pos += digits
        out[pos] = 10
        pos += 1
    return pos


def write_synthetic_kmers(path, *, n_samples=100, n_kmers=10_000, density=0.05, n_markers=10,
                          marker_rates=(0.05, 0.8), seed=0, compress=False, lines_per_block=20_000):
    """Write a k-mer count file with planted marker k-mers, to try genosift at any scale.

    Samples ``sample_0000``... get a binary phenotype, half ``"case"`` and half ``"control"``.
    Every k-mer is present in each sample with probability ``density``, independently of the
    phenotype, except ``n_markers`` k-mers spread evenly over the file: present with probability
    ``marker_rates[0]`` in controls and ``marker_rates[1]`` in cases. Counts are geometric
    (p = 0.3, mean 3.3). The file is written block by block (memory holds ``lines_per_block``
    lines), so files of many GB take little memory.

    Parameters
    ----------
    path : str or Path
        The file to write (fsm-lite text, ``KMER | sample_0000:3 ...``; gzip if ``compress``).
    n_samples, n_kmers : int
    density : float
        Probability that a sample holds a (non-marker) k-mer.
    n_markers : int
    marker_rates : (float, float)
        Probability that a control, and a case, holds a marker k-mer.
    seed : int
    compress : bool
        gzip the text (level 1).
    lines_per_block : int

    Returns
    -------
    phenotype : pandas.Series
        Indexed by sample id (index name ``"sample"``), values ``"case"`` / ``"control"``.
    markers : ndarray of str
        The marker k-mers, in file order.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.kmers"
    >>> pheno, markers = write_synthetic_kmers(path, n_samples=6, n_kmers=4, n_markers=1, seed=1)
    >>> sorted(pheno.value_counts().items()), len(markers)
    ([('case', 3), ('control', 3)], 1)
    >>> len(path.read_text().splitlines())
    4
    """
    import gzip

    import pandas as pd

    if n_samples < 2 or n_kmers < 1 or not 0 <= n_markers <= n_kmers:
        raise ValueError(f"Need n_samples >= 2, n_kmers >= 1 and 0 <= n_markers <= n_kmers; got "
                         f"{n_samples}, {n_kmers}, {n_markers}.")
    rng = np.random.default_rng(seed)
    width = max(4, len(str(n_samples - 1)))
    names = [f"sample_{i:0{width}d}" for i in range(n_samples)]
    ids = np.frombuffer("".join(names).encode(), np.uint8).reshape(n_samples, -1)
    case = rng.permutation(np.arange(n_samples) < n_samples // 2 + n_samples % 2)
    marker_at = np.unique(np.linspace(0, n_kmers - 1, n_markers).round().astype(np.int64)) if n_markers else []
    is_marker = np.zeros(n_kmers, bool)
    is_marker[marker_at] = True
    markers = []
    opener = (lambda p: gzip.open(p, "wb", compresslevel=1)) if compress else (lambda p: open(p, "wb"))
    with opener(path) as fh:
        for a in range(0, n_kmers, lines_per_block):
            m = min(lines_per_block, n_kmers - a)
            kmers = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (m, 31))]
            rate = np.where(is_marker[a:a + m, None], np.where(case, marker_rates[1], marker_rates[0]), density)
            present = rng.random((m, n_samples)) < rate
            counts = rng.geometric(0.3, int(present.sum()))
            out = np.empty(m * (34 + n_samples * (ids.shape[1] + 8)), np.uint8)
            size = _format_lines(kmers, present, counts, ids, ids.shape[1], out)
            fh.write(out[:size].tobytes())
            markers += [kmers[i].tobytes().decode() for i in np.flatnonzero(is_marker[a:a + m])]
    phenotype = pd.Series(np.where(case, "case", "control"), index=pd.Index(names, name="sample"), name="phenotype")
    return phenotype, np.array(markers, dtype=object)
