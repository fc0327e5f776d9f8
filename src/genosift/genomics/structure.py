"""Population structure from the data itself: the principal coordinates of the samples.

Classical (metric) multidimensional scaling of a distance between samples computed from all the
features. The only quadratic memory is the ``n x n`` sample-by-sample matrix (float64, ``8 n^2``
bytes, plus LAPACK's workspace for the top eigenpairs): the features are read in blocks within
``chunk_bytes``, so a store of any number of features is reduced in bounded memory.

Two distances, both computed from the cross-product of the samples accumulated block by block:

``"kmds"``
    SEER's ``kmds``: ``d(i, j) = |x_i - x_j|^2 / p``, on presence/absence the share of the ``p``
    features that one sample carries and the other lacks (a normalised Hamming distance). MDS then
    squares ``d``. kmds also divides each coordinate by its largest magnitude; the coordinates
    here keep the scale of the eigenvalues, as covariates of a regression the two are the same.
``"euclidean"``
    ``d(i, j) = |x_i - x_j|``: classical MDS of euclidean distances is principal component
    analysis, the coordinates are the samples' principal component scores.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core import engine
from ..core.constraints import AnyOf, Boolean, Nothing, checked
from ..core.distinct import FirstColumns, distinct_columns
from ..core.validation import is_int, param_error

__all__ = ["AUTO_MAX", "AUTO_MIN_SHARE", "LANCZOS_FROM", "METRICS", "choose_components", "kinship",
           "looks_like_newick", "newick_clades", "principal_coordinates",
           "tree_kinship"]

#: The distances between samples that ``principal_coordinates`` offers.
METRICS = ("kmds", "euclidean")
_OWNER = "principal_coordinates"
#: A sparse block is multiplied as sparse while its product costs less than this share of the
#: dense product (the sum over its features of their squared entry counts, against ``n^2`` per
#: feature), and its result holds at most ``n^2 / 4`` entries; otherwise it is made dense, within
#: the budget, and multiplied by BLAS.
_SPARSE_COST = 0.05
#: From this many samples on, the top eigenpairs of a euclidean metric come from Lanczos iterations
#: rather than LAPACK (7 s against 3.5 s for 10 of 3,000 samples on 2 cores; the gap grows as n).
#: kmds needs every eigenvalue (its shares are of the positive ones) and takes them, with its top
#: eigenvectors, from one reduction to tridiagonal form at any n (``_tridiagonal_eigenpairs``).
LANCZOS_FROM = 3000
#: An eigenvalue at or below this share of the largest is no dimension of the data.
_RANK_TOL = 1e-9
#: ``n_components="auto"``: the number of coordinates looked at (the scree), and the smallest
#: share of the total that a coordinate explains to be a candidate (``choose_components``).
AUTO_MAX = 30
AUTO_MIN_SHARE = 0.01


@checked(binary=AnyOf(Boolean(), Nothing()), distinct=Boolean())
def principal_coordinates(X, n_components, *, metric="kmds", binary=None, distinct=True, chunk_bytes=None,
                          samples=None):
    """The top principal coordinates of the samples (classical multidimensional scaling).

    The covariates that account for population structure (lineage) in a per-feature association
    test, as SEER's ``kmds`` gives them to ``seer --struct``: use the result as ``covariates``.

    Parameters
    ----------
    X : ndarray, scipy.sparse matrix, pandas DataFrame, store path or ``Store``, or a file path
        Samples in rows, features in columns. A store is read in feature blocks (out of core); any
        other file is read into memory with ``genosift.io.read`` (k-mer files as sparse matrices,
        never densified).
    n_components : int or "auto"
        How many coordinates, ``1 <= n_components < n_samples``; ``"auto"``: as many as the
        scree of the top ``AUTO_MAX`` tells (``choose_components``: the largest ratio of
        consecutive eigenvalues among the coordinates that explain at least ``AUTO_MIN_SHARE``
        of the total each; for a clonal population of L lineages, L - 1).
    metric : {'kmds', 'euclidean'}, default 'kmds'
        The distance between samples (see the module's notes): 'kmds' is SEER's kmds (the share of
        features whose values differ, squared differences over the number of features);
        'euclidean' gives principal component analysis.
    binary : bool, optional
        Read values as presence (1.0 where above 0), as kmds reads k-mers. By default True for
        'kmds' and False for 'euclidean'.
    distinct : bool, default True
        Count each distinct feature (a pattern: the k-mers carried by the same samples, after
        ``binary``) once. The coordinates then describe what many loci share, the lineages: an
        accessory gene, whose hundreds of k-mers share one pattern, counts as one feature and
        takes no coordinate of its own (counted by k-mer, the genes carried across lineages,
        the causal one among them, take coordinates, and adjusting for those adjusts the gene
        away). False: every feature counts, as SEER's ``kmds`` does.
    chunk_bytes : int, optional
        Budget of the feature blocks in memory at once (default ``genosift.core.engine.CHUNK_BYTES``),
        besides the ``n x n`` matrix.
    samples : sequence of sample ids, boolean mask or row positions, optional
        Which samples to use (by default all), in the order of the result's rows: ids of the
        data's samples where they have ids (a DataFrame indexed by them, a store's or a file's
        samples; ids they lack are an error), else (an array, a sparse matrix, a DataFrame with
        a plain integer index) row positions; or a boolean mask of one value per row.

    Returns
    -------
    pandas.DataFrame (n_samples, n_components)
        Columns ``PC1 .. PCk``; coordinate ``k`` is the ``k``-th eigenvector of the double-centred
        squared distances times the root of its eigenvalue, its largest-magnitude entry positive.
        Indexed by the sample ids where known. ``.attrs``: ``eigenvalues``, ``explained`` (each
        eigenvalue's share of the sum of all positive eigenvalues), ``metric``, ``binary``, ``n_features``;
        with ``"auto"`` also ``scree`` (the shares of the ``AUTO_MAX`` coordinates looked at,
        or of all there are) and ``rule`` (why that many, in words).
        kmds's distances are not euclidean: some eigenvalues are negative (shares of the trace
        would add up to more than 1), so the shares are of the positive ones: in [0, 1], adding
        up to at most 1, and to 1 over every positive eigenvalue. For 'euclidean' (a Gram
        matrix, no negative eigenvalue) that sum is the trace, the total variance.

    Notes
    -----
    Time ``O(n^2 p)`` (one symmetric rank-k update per feature block, by BLAS on ``set_threads``
    threads; very sparse blocks by a sparse product; integer values, such as presence/absence, in
    exact integer arithmetic, each distinct column once) and ``O(n^3)`` for the eigenpairs: for
    'kmds' one reduction to tridiagonal form gives every eigenvalue (the positive ones' sum) and
    the top eigenvectors; for 'euclidean' the top ones only (Lanczos iterations, ``O(n^2)`` each,
    from ``LANCZOS_FROM`` samples on). A
    coordinate whose largest magnitude is shared by entries of opposite signs (a symmetric
    configuration) has no well-defined sign.

    Raises
    ------
    ValueError
        ``n_components`` out of range, all samples equal on every feature, or fewer dimensions of
        variation than ``n_components``; non-finite values.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> X = np.array([[1, 1, 0, 0, 1], [1, 1, 0, 1, 0], [0, 0, 1, 1, 1], [0, 1, 1, 1, 0], [1, 0, 0, 0, 1]])
    >>> pcs = principal_coordinates(pd.DataFrame(X, index=pd.Index(list("abcde"), name="sample")), 2)
    >>> pcs.round(4)  # doctest: +NORMALIZE_WHITESPACE
               PC1     PC2
    sample
    a      -0.3431 -0.1321
    b       0.0022 -0.3520
    c       0.2622  0.4055
    d       0.5123 -0.1235
    e      -0.4335  0.2020
    >>> pca = principal_coordinates(X, 2, metric="euclidean")
    >>> [round(v, 3) for v in pca.attrs["explained"]]
    [0.551, 0.351]
    """
    auto = isinstance(n_components, str) and n_components == "auto"
    _check_options(1 if auto else n_components, metric)
    binary = metric == "kmds" if binary is None else binary
    budget = engine.check_budget(chunk_bytes, _OWNER)
    source, ids = _source(X, binary, samples, distinct=bool(distinct))
    n, p = source.shape
    if n < 2 or not auto and not 1 <= n_components < n:
        raise param_error("n_components", _OWNER, f"an int in [1, n_samples - 1] = [1, {n - 1}]", n_components)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=engine.threads(), user_api="blas"):  # genosift's --threads
        gram = _cross_products(source, budget)
        B, _ = _centred_distances(gram, source.used, metric)
        values, vectors, total = _top_eigenpairs(B, min(AUTO_MAX, n - 1) if auto else n_components,
                                                 strict=not auto, spectrum=metric == "kmds")
    more = {}
    if auto:
        scree = values / total
        n_components, rule = choose_components(values, total)
        values, vectors = values[:n_components], vectors[:, :n_components]
        more = {"scree": scree.tolist(), "rule": rule}
    coords = vectors * np.sqrt(values)
    top = np.argmax(np.abs(coords), axis=0)
    coords *= np.where(coords[top, np.arange(n_components)] < 0, -1.0, 1.0)
    import pandas as pd

    frame = pd.DataFrame(coords, index=None if ids is None else pd.Index(ids, name="sample"),
                         columns=[f"PC{k + 1}" for k in range(n_components)])
    frame.attrs.update(eigenvalues=values.tolist(), explained=(values / total).tolist(), metric=metric,
                       binary=bool(binary), n_features=int(p), distinct=bool(distinct),
                       n_used=int(source.used), **more)
    return frame


def choose_components(eigenvalues, total):
    """How many principal coordinates hold the population structure, from the scree of the top
    ``eigenvalues`` (descending) and ``total``, the sum of all the positive eigenvalues (what each
    coordinate's share is of): ``(k, rule)``, ``rule`` saying why in words.

    The eigenvalue-ratio rule (Ahn & Horenstein 2013, Econometrica 81:1203): ``k`` maximises
    ``eigenvalues[k - 1] / eigenvalues[k]``, the steepest drop of the scree, over the
    coordinates ``k`` that explain at least ``AUTO_MIN_SHARE`` of the total each (a drop after a
    negligible one is noise). L lineages of a clonal population stand apart in L - 1
    dimensions, and the drop after the (L - 1)-th is the largest. Without such a coordinate (or
    with one eigenvalue only), ``k`` is 1.

    >>> choose_components(np.array([35.0, 31.7, 29.9, 7.2, 4.9, 4.3, 2.8, 2.6, 1.0, 0.6]), 100.0)[0]
    3
    """
    values = np.asarray(eigenvalues, dtype=np.float64)
    shares = values / total
    candidates = min(int(np.sum(shares >= AUTO_MIN_SHARE)), values.size - 1)  # each with the one after it
    if candidates < 1:
        return 1, (f"1 principal coordinate: no coordinate explains {AUTO_MIN_SHARE:.0%} of the variance, or "
                   "there is only one, so the scree has no drop to find")
    ratios = values[:candidates] / values[1:candidates + 1]
    k = int(np.argmax(ratios)) + 1
    return k, (f"{k} principal coordinate(s): the steepest drop of the scree (eigenvalue {k} is {ratios[k - 1]:.2f} "
               f"times eigenvalue {k + 1}) after one of the {candidates} coordinates that explain at least "
               f"{AUTO_MIN_SHARE:.0%} of the variance each; "
               + (f"PC1-PC{k} explain" if k > 1 else "PC1 explains") + f" {shares[:k].sum():.1%} (of the positive "
               "eigenvalues)")


@checked(binary=Boolean(), distinct=Boolean())
def kinship(X, *, binary=False, distinct=True, chunk_bytes=None, samples=None):
    """The kinship of the samples from their features, for a mixed model (``method="lmm"``).

    ``K = Xc Xc^T / s``: the cross-products of the samples' centred features (each feature less
    its mean over the samples), scaled so that the mean of the diagonal is 1 (``s``: the trace
    over ``n``), so that ``h2`` is a share of the variance. It is the centred Gram matrix of
    ``principal_coordinates(metric="euclidean")``, computed the same way: a store read in
    feature blocks (out of core; memory: the n x n matrix), integer data multiplied exactly
    (each distinct column once), the same bits from every input form.

    Parameters
    ----------
    X : ndarray, scipy.sparse matrix, DataFrame, store path or ``Store``, or a data file
        Samples in rows, features in columns.
    binary : bool, default False
        Read the features as presence/absence (k-mers as pyseer and SEER test them).
    chunk_bytes : int, optional
        The memory budget of a store's blocks.
    samples : sequence of sample ids, boolean mask or row positions, optional
        Which samples to use (by default all), in the order of the result's rows: as
        ``principal_coordinates`` takes them (ids where the data have ids, else row positions;
        or a boolean mask of one value per row).

    Returns
    -------
    DataFrame
        n x n, indexed and with columns by sample id where the data have ids (a DataFrame's
        index, a store's or a file's samples), else by row position (``0 .. n-1``, or the
        positions ``samples`` kept), so that ``genosift.heritability`` and
        ``genosift.score(..., method="lmm", kinship=K)`` match it to the samples scored.
        ``.attrs["n_used"]``: the features (or, ``distinct``, the distinct patterns) counted.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> X = pd.DataFrame([[1, 0, 1], [1, 0, 0], [0, 1, 1], [0, 1, 0]], index=list("abcd"))
    >>> K = kinship(X)
    >>> K.round(3).to_numpy().tolist()
    [[1.0, 0.333, -0.333, -1.0], [0.333, 1.0, -1.0, -0.333], [-0.333, -1.0, 1.0, 0.333], [-1.0, -0.333, 0.333, 1.0]]
    """
    owner = "kinship"
    budget = engine.check_budget(chunk_bytes, owner)
    source, ids = _source(X, bool(binary), samples, owner, distinct=bool(distinct))
    n, p = source.shape
    if n < 2:
        raise param_error("X", owner, "data of at least 2 samples", f"{n} sample(s)")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=engine.threads(), user_api="blas"):
        gram = _cross_products(source, budget, owner)
        K, total = _centred_distances(gram, source.used, "euclidean", owner)
    K /= total / n
    import pandas as pd

    ids = np.arange(n) if ids is None else ids
    frame = pd.DataFrame(K, index=pd.Index(ids, name="sample"), columns=pd.Index(ids))
    frame.attrs["n_used"] = int(source.used)
    return frame


def tree_kinship(path, *, fh=None):
    """The kinship of the samples from a phylogeny (Newick): the length of the path that two
    samples share from the root, ``K_ij`` = the distance from the root to their most recent common
    ancestor (``K_ii`` the root-to-tip distance), as pyseer's ``phylogeny_distance --lmm`` makes
    it.

    Each pair is written once, at its most recent common ancestor (``O(n^2)`` for any shape of
    tree, ladders included), from the root-to-node distances. The tree is read with
    Biopython's Newick parser (``Bio.Phylo``) and walked without recursion, so trees of any depth
    (ladders of thousands of levels) are read; the file may be compressed, and is read once
    (``fh``: the file already opened with ``genosift.io.compression.open_binary``; a pipe reads
    as a file does). Its leaves are the samples, named once each; every branch but the root's
    needs a length. A negative length (neighbour joining gives them) is taken as 0, with a
    warning: a shared path cannot be negative.

    Returns
    -------
    DataFrame
        n x n, indexed and with columns by the leaves' names, in the tree's order.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.nwk"
    >>> _ = f.write_text("((A:1,B:2):0.5,(C:1,D:1):2);")
    >>> tree_kinship(f).to_numpy().tolist()
    [[1.5, 0.5, 0.0, 0.0], [0.5, 2.5, 0.0, 0.0], [0.0, 0.0, 3.0, 2.0], [0.0, 0.0, 2.0, 3.0]]
    """
    import pandas as pd

    name = str(path)
    order, parents = newick_clades(path, fh=fh)
    names = [node.name for node in order if not node.clades]
    lengths = np.zeros(len(order))
    for k, node in enumerate(order[1:], 1):
        if node.branch_length is None:
            raise ValueError(f"The tree {name!r} has a branch without a length (above "
                             f"{node.name or 'an inner node'}): the kinship sums branch lengths.")
        lengths[k] = float(node.branch_length)
    if not np.isfinite(lengths).all():
        raise ValueError(f"The tree {name!r} has a branch of length {lengths[~np.isfinite(lengths)][0]}: give "
                         "finite branch lengths.")
    negative = lengths < 0
    if negative.any():
        import warnings

        warnings.warn(f"The tree {name!r} has {int(negative.sum())} branch(es) of negative length (down to "
                      f"{lengths.min():.4g}), as neighbour joining gives: they are taken as 0 in the kinship (a "
                      "shared path cannot be negative). Give a tree with non-negative branch lengths to "
                      "avoid this.", UserWarning, stacklevel=2)
        lengths = np.maximum(lengths, 0.0)
    K = _shared_paths(order, parents, lengths)
    return pd.DataFrame(K, index=pd.Index(names, name="sample"), columns=pd.Index(names))


def newick_clades(path, *, fh=None):
    """The clades of a Newick tree in pre-order (the root first, as the text lists them) and the
    position of each one's parent (``-1`` for the root): ``(clades, parents)``, Biopython clades.

    The file may be compressed, and is read once (``fh``: the file already opened with
    ``genosift.io.compression.open_binary``); quoted names lose their quotes. The tree is walked
    without recursion (any depth). Its leaves must be named, once each: the samples.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.nwk"
    >>> _ = f.write_text("(('A', 'B'), C);")
    >>> clades, parents = newick_clades(f)
    >>> [c.name for c in clades], parents
    ([None, None, 'A', 'B', 'C'], [-1, 0, 1, 1, 0])
    """
    import io
    from contextlib import nullcontext

    from ..io.compression import MAX_LINE_BYTES, open_binary
    from ..io.reading import file_errors, optional_module

    Phylo = optional_module("Bio.Phylo", "reading a phylogeny (Newick)", package="biopython")
    name = str(path)
    with file_errors(path, "a Newick tree", broad=True), \
            (nullcontext(fh) if fh is not None else open_binary(path, max_line=MAX_LINE_BYTES)) as opened:
        text = opened.read().decode("utf-8").removeprefix("\ufeff")
        tree = Phylo.read(io.StringIO(text), "newick")
    order, parents, stack = [], [], [(tree.root, -1)]
    while stack:  # (no recursion: any depth)
        node, parent = stack.pop()
        parents.append(parent)
        stack.extend((child, len(order)) for child in reversed(node.clades))
        order.append(node)
    names = [node.name for node in order if not node.clades]
    if any(not leaf for leaf in names):
        raise ValueError(f"The tree {name!r} has leaves without a name: every leaf must be a sample id.")
    seen = set()
    twice = sorted({leaf for leaf in names if leaf in seen or seen.add(leaf)})
    if twice:
        raise ValueError(f"The tree {name!r} names the leaves {twice[:5]} more than once: each sample once.")
    return order, parents


def _shared_paths(order, parents, lengths):
    """``K_ij``: the root's distance to the most recent common ancestor of leaves ``i`` and ``j``,
    from the clades in pre-order (``order``, root first), the position of each one's parent and the
    length of the branch above each.

    In pre-order, the leaves under a clade are a run of consecutive leaves; each pair is written
    once, at its common ancestor, as a block between the run of one child and those of the
    children before it: ``O(n^2)`` for any shape (ladders included), no pair visited twice."""
    index = {id(node): k for k, node in enumerate(order)}
    depth = lengths.copy()
    first = np.zeros(len(order), dtype=np.intp)  # each clade's leaves: [first, last)
    last = np.zeros(len(order), dtype=np.intp)
    leaf = 0
    for k, node in enumerate(order):
        if k:
            depth[k] += depth[parents[k]]  # the parent comes first in pre-order
        if not node.clades:
            first[k], last[k], leaf = leaf, leaf + 1, leaf + 1
    n = leaf
    for k in range(len(order) - 1, -1, -1):  # children before parents: their runs make the parent's
        if order[k].clades:
            kids = [index[id(c)] for c in order[k].clades]
            first[k], last[k] = first[kids[0]], last[kids[-1]]
    K = np.empty((n, n))
    for k, node in enumerate(order):
        if not node.clades:
            K[first[k], first[k]] = depth[k]
            continue
        lo = first[k]
        for child in node.clades[1:]:
            c = index[id(child)]
            K[first[c]:last[c], lo:first[c]] = depth[k]
            K[lo:first[c], first[c]:last[c]] = depth[k]
    return K


def looks_like_newick(head):
    """Whether the first bytes of a file, ``head``, are a Newick tree: after spaces and comments in
    brackets (``[&R]``, as tree tools write), an opening parenthesis. A kinship table starts with
    its header of sample ids instead.

    >>> looks_like_newick(b"[&R] ((A:1,B:1):1,C:2);"), looks_like_newick(b"\\tA\\tB\\nA\\t1\\t0\\n")
    (True, False)
    """
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    while text.startswith(b"["):
        end = text.find(b"]")
        if end < 0:
            return False
        text = text[end + 1:].lstrip()
    return text.startswith(b"(")


def _check_options(n_components, metric):
    if not is_int(n_components) or n_components < 1:
        raise param_error("n_components", _OWNER, "a positive int (below the number of samples)", n_components)
    if metric not in METRICS:
        raise param_error("metric", _OWNER, f"one of {list(METRICS)}", metric)


class _Blocks:
    """The feature blocks of a matrix or a store, of all its samples or of ``rows``, as presence
    where ``binary`` (a store reads itself as presence): ``shape`` and ``blocks(budget)``."""

    def __init__(self, matrix=None, store=None, binary=False, distinct=False):
        self.matrix, self.store, self.binary, self.rows, self.distinct = matrix, store, binary, None, distinct
        self.shape = (store if store is not None else matrix).shape
        self.used = self.shape[1]  # the columns the last pass gave: the distinct ones where ``distinct``

    def select(self, rows):
        self.rows = rows
        self.shape = (len(rows), self.shape[1])

    def blocks(self, budget):
        from ..core.transforms import presence

        if self.store is not None:
            parts = self.store.feature_blocks(chunk_bytes=budget)
        else:
            width = engine.block_width(self.matrix.shape[0], None, budget)
            parts = engine.column_blocks(self.matrix, width, keep_sparse=True)
        first = FirstColumns() if self.distinct else None
        for _, _, block in parts:
            block = block if self.rows is None else block[self.rows]
            block = presence(block) if self.binary and self.store is None else block
            yield block if first is None else first.keep(block)
        self.used = self.shape[1] if first is None else first.seen


def _source(X, binary, samples, owner=_OWNER, distinct=False):
    """``(blocks, ids)``: the feature blocks of ``X`` for the samples ``samples`` picks
    (``core.samples.sample_rows``: ids of the data's samples where they have ids, else a boolean
    mask or row positions; in the order given) and the labels of the result's rows: the samples'
    ids, a DataFrame's index without ids, the row positions kept, or None (an array, every row)."""
    from ..sources import matrix_or_store

    store, X, ids, labels = matrix_or_store(X, binary=binary)
    if store is not None:
        return _select(_Blocks(store=store, distinct=distinct), ids, ids, samples, owner)
    M = X if sp.issparse(X) else np.asarray(X)
    if M.ndim != 2 or M.dtype.kind not in "biuf":
        raise param_error("X", owner, "a 2-D numeric matrix, a DataFrame or a store",
                          f"an array of shape {M.shape} and dtype {M.dtype}")
    return _select(_Blocks(matrix=M, binary=binary, distinct=distinct), ids, labels, samples, owner)


def _select(source, ids, labels, samples, owner=_OWNER):
    """``(source, labels)`` with the rows ``samples`` picks among the data's (matched to ``ids``
    where they have ids) selected, and the labels of the rows of the result."""
    from ..core.samples import sample_rows

    rows = sample_rows(samples, source.shape[0], ids, owner=owner)
    if rows is None:
        return source, labels
    source.select(rows)
    return source, (rows if labels is None else np.asarray(labels)[rows])


def _cross_products(source, budget, owner=_OWNER):
    """``G`` (n x n, float64, Fortran order) with ``G_ii + G_jj - 2 G_ij = |x_i - x_j|^2``, summed
    over feature blocks: the plain cross-products of integer-valued blocks, exactly (``_ExactProducts``),
    else the centred cross-products of dense blocks and the plain ones of sparse blocks (all give
    the same distances: a shift of a feature changes none)."""
    from scipy.linalg import get_blas_funcs

    n = source.shape[0]
    gram = np.zeros((n, n), order="F")
    syrk = get_blas_funcs("syrk", dtype=np.float64)
    exact = _ExactProducts(gram)
    for block in source.blocks(engine.share_budget(budget)):
        if exact.add(block):
            continue
        if sp.issparse(block) and _sparse_pays(block):
            product = sp.triu(block @ block.T, format="coo")
            gram[product.row, product.col] += product.data
            continue
        # C order, so that the transposed block handed to syrk is already in Fortran order (no copy)
        dense = block.toarray(order="C") if sp.issparse(block) else np.asarray(block, dtype=np.float64)
        if not (dense.flags.owndata and dense.flags.writeable and dense.dtype == np.float64):
            dense = np.array(dense, dtype=np.float64)  # never centre the caller's array
        if not np.isfinite(dense).all():
            raise ValueError(f"The data given to {owner} hold NaN or infinite values; it needs finite values. Drop "
                             "or impute them first.")
        dense -= dense.mean(axis=0)
        out = syrk(1.0, np.asfortranarray(dense.T), beta=1.0, c=gram, trans=1, lower=0, overwrite_c=1)
        if out is not gram:
            gram[...] = out
    _mirror_upper(gram)
    return gram


class _ExactProducts:
    """Integer-valued blocks (presence/absence, counts) added to ``gram`` exactly: their plain
    cross-products are integers, and while every sum stays below 2^53 float64 holds them exactly
    in any order of summation (BLAS's, any block width). So each distinct column (``distinct_columns``:
    k-mers carried by the same genomes) is multiplied once, weighted by its number of copies, and
    the result is the same bits as summing every column."""

    def __init__(self, gram):
        from scipy.linalg import get_blas_funcs

        self.gram, self.bound = gram, 0.0
        self.gemm = get_blas_funcs("gemm", dtype=np.float64)

    def add(self, block):
        """Add ``block @ block.T`` to the upper triangle of ``gram`` if it is exact; else False."""
        values = block.data if sp.issparse(block) else np.asarray(block)
        if values.size and not (np.isfinite(values).all() and np.array_equal(values, np.trunc(values))):
            return False
        top = float(np.abs(values).max()) if values.size else 0.0
        bound = self.bound + top * top * block.shape[1]
        if not bound < 2.0 ** 53:
            return False
        self.bound = bound
        block = block.tocsc() if sp.issparse(block) else block
        found = distinct_columns(block)
        if found is not None:
            block = block[:, found[0]]
        # C order: its transpose is the Fortran (p x n) matrix BLAS reads without a copy
        dense = block.toarray(order="C") if sp.issparse(block) else np.ascontiguousarray(block, dtype=np.float64)
        weighted = dense if found is None else dense * np.bincount(found[1]).astype(np.float64)
        out = self.gemm(1.0, weighted.T, dense.T, beta=1.0, c=self.gram, trans_a=1, overwrite_c=1)
        if out is not self.gram:  # in place for a Fortran-ordered float64 gram, as it is
            self.gram[...] = out
        return True


def _mirror_upper(gram, step=512):
    """Copy the upper triangle of ``gram`` onto its lower one in place, a strip of rows at a time
    (no second n x n matrix)."""
    n = gram.shape[0]
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        gram[i0:i1, :i0] = gram[:i0, i0:i1].T
        square = gram[i0:i1, i0:i1]
        square[...] = np.triu(square) + np.triu(square, 1).T


def _sparse_pays(block):
    block = block.tocsc()
    if not np.isfinite(block.data).all():
        return False  # the dense path names the problem
    per_feature = np.diff(block.indptr).astype(np.float64)
    cost = float(per_feature @ per_feature)
    n2 = float(block.shape[0]) ** 2
    return cost <= _SPARSE_COST * n2 * block.shape[1] and cost <= n2 / 4


def _centred_distances(gram, n_features, metric, owner=_OWNER):
    """``B = -1/2 J P J`` in place of ``gram`` (``P``: the metric's squared distances, ``J`` the
    centring matrix), and its trace."""
    diag = np.diag(gram).copy()
    P = gram
    P *= -2.0
    P += diag[:, None]
    P += diag[None, :]
    np.maximum(P, 0.0, out=P)  # rounding below zero
    np.fill_diagonal(P, 0.0)
    if not P.any():
        raise ValueError(f"All samples given to {owner} are equal on every feature (a constant data set): "
                         "they have no structure. Give data whose samples differ.")
    if metric == "kmds":
        P /= n_features
        P *= P
    row = P.mean(axis=1)
    P -= row[:, None]
    P -= row[None, :]
    P += row.mean()
    P *= -0.5
    return P, float(np.trace(P))


def _top_eigenpairs(B, k, strict=True, spectrum=False):
    """The ``k`` largest eigenvalues of the symmetric ``B`` (overwritten), descending, their unit
    vectors, and the sum of all of ``B``'s positive eigenvalues (the total the shares are of).

    ``spectrum`` (a ``B`` with negative eigenvalues, as kmds's): every eigenvalue, from one
    reduction to tridiagonal form (``_tridiagonal_eigenpairs``, ``O(n^3)``). Otherwise ``B`` is a
    Gram matrix (positive semi-definite), its trace is that sum, and the top pairs come from
    LAPACK's ``syevr`` for those only (``O(n^3)``), or, from ``LANCZOS_FROM`` samples on, ARPACK's
    Lanczos iteration to machine precision (``O(n^2)`` per step; a fixed start, so repeatable).
    Fewer dimensions of variation than ``k`` are an error, or (not ``strict``) those there are."""
    n = B.shape[0]
    if spectrum:
        values, vectors, positive = _tridiagonal_eigenpairs(B, k)
        return (*_ranked(values, vectors, k, strict), positive)
    positive = float(np.trace(B))
    if n >= LANCZOS_FROM and k < n // 10:
        from scipy.sparse.linalg import eigsh

        start = np.random.default_rng(0).standard_normal(n)  # not the centred B's null vector (ones)
        values, vectors = eigsh(B, k, which="LA", v0=start, tol=0)
        order = np.argsort(values)[::-1]
    else:
        from scipy.linalg import eigh

        values, vectors = eigh(B, subset_by_index=[n - k, n - 1], overwrite_a=True, check_finite=False)
        order = np.arange(k)[::-1]
    return (*_ranked(values[order], vectors[:, order], k, strict), positive)


def _tridiagonal_eigenpairs(B, k):
    """Every eigenvalue of the symmetric ``B`` and the top ``k`` eigenpairs (descending), from one
    reduction ``B = Q T Q^T`` (LAPACK's ``sytrd``, in place of ``B``): the eigenvalues of the
    tridiagonal ``T`` by bisection (``O(n^2)``), its top ``k`` eigenvectors by MRRR, taken back by
    ``Q`` (``n - 1`` Householder reflectors, ``O(n^2 k)``); and the sum of the positive eigenvalues.
    The cost is the reduction's, about that of LAPACK's top eigenpairs alone: on kmds matrices of
    8 lineages, 8 s for 3,000 samples and 2 min for 10,000 (Lanczos, without the spectrum: 9 s and
    76 s; 2 busy cores), where the cross-products of 20,000 features took 16 s and 70-165 s."""
    from scipy.linalg import eigh_tridiagonal, eigvalsh_tridiagonal, lapack

    n = B.shape[0]
    lwork, _ = lapack.dsytrd_lwork(n, lower=1)
    A, d, e, tau, info = lapack.dsytrd(B, lower=1, lwork=int(lwork), overwrite_a=1)
    if info:
        raise np.linalg.LinAlgError(f"LAPACK's sytrd failed (info {info}).")
    every = eigvalsh_tridiagonal(d, e, check_finite=False)
    values, Z = eigh_tridiagonal(d, e, select="i", select_range=(n - k, n - 1), check_finite=False,
                                 lapack_driver="stemr")
    for i in range(n - 2, -1, -1):  # Q = H(0) ... H(n-2), H(i) = I - tau_i v v^T, v = (1, A[i+2:, i]) from row i+1
        if tau[i]:
            v = A[i + 1:, i].copy()
            v[0] = 1.0
            part = Z[i + 1:]
            part -= np.outer(tau[i] * v, v @ part)
    return values[::-1], Z[:, ::-1], float(every[every > 0].sum())


def _ranked(values, vectors, k, strict):
    """The top pairs (descending) that are dimensions of the data (``_RANK_TOL``), or the error."""
    rank = int(np.sum(values > _RANK_TOL * values[0]))
    if rank < k and not strict and rank:
        return values[:rank], np.ascontiguousarray(vectors[:, :rank])
    if rank < k:
        raise ValueError(f"The data given to {_OWNER} vary in only {rank} dimension(s) of the distances: "
                         f"{k} coordinates were asked for. Ask for at most {rank} (n_components={rank}).")
    return values, np.ascontiguousarray(vectors)
