"""Trees: UPGMA against Scoary's tree of its example data, Newick reading and writing, restriction."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from genosift.genomics.trees import Tree, read_tree, upgma_tree, write_newick

DATA = Path(__file__).resolve().parents[2] / "data" / "scoary"


def _example():
    """Scoary's example gene table: 100 isolates x 9001 genes (0/1) and the isolates' names."""
    from genosift.io import read

    data = read(DATA / "Gene_presence_absence.csv.gz")
    return data.X.toarray(), data.sample_ids.tolist()


def test_upgma_equals_scoary_on_its_example_data():
    X, names = _example()
    expected = read_tree(DATA / "ExampleTree.nwk")  # Scoary 1.6.16's UPGMA tree of this table
    ours = upgma_tree(X, names)
    assert ours.clades() == expected.clades()
    text = (DATA / "ExampleTree.nwk").read_text().strip()
    assert ours.newick() == text.replace("'", "").replace(" ", "")  # the children in Scoary's order too
    assert upgma_tree(sp.csr_matrix(X[:, -3000:]), names).clades() == upgma_tree(X[:, -3000:], names).clades()


def test_upgma_ties_as_scoary_breaks_them():
    # a table of many equal distances (genes in rows here) and Scoary 1.6.16's UPGMA tree of it
    genes = [[0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], [1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0],
             [0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0], [0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0],
             [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], [1] * 12]
    ours = upgma_tree(np.array(genes).T, "abcdefghijkl")
    assert ours.newick() == "(((((a,h),(g,l)),((b,c),j)),(((d,e),k),f)),i);"
    X = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])  # all at the same distance
    assert upgma_tree(X, "abcd").newick() == "(((a,b),c),d);"
    with pytest.raises(ValueError, match="no gene varies"):
        upgma_tree(np.ones((3, 2)), "abc")


def test_read_tree_quotes_spaces_and_errors(tmp_path):
    f = tmp_path / "t.nwk.gz"
    f.write_bytes(gzip.compress(b"(('Isolate_1', 'Isolate_2'), ('a b', c));"))
    t = read_tree(f)
    assert t.names.tolist() == ["Isolate_1", "Isolate_2", "a b", "c"]
    assert t.clades() == {frozenset(["Isolate_1", "Isolate_2"]), frozenset(["a b", "c"]),
                          frozenset(["Isolate_1", "Isolate_2", "a b", "c"])}
    (tmp_path / "dup.nwk").write_text("((A,B),A);")
    with pytest.raises(ValueError, match="more than once"):
        read_tree(tmp_path / "dup.nwk")
    (tmp_path / "unnamed.nwk").write_text("((A,B),);")
    with pytest.raises(ValueError, match="without a name"):
        read_tree(tmp_path / "unnamed.nwk")


def test_write_and_read_back(tmp_path):
    X, names = _example()
    t = upgma_tree(X[:40, -500:], names[:40])
    write_newick(t, tmp_path / "u.nwk")
    back = read_tree(tmp_path / "u.nwk")
    assert back.names.tolist() == t.names.tolist()
    assert np.array_equal(back.parent, t.parent) and np.array_equal(back.tip, t.tip)
    odd = Tree.from_parents([3, 3, 4, 4, -1], ["x(y)", "a b", "c,d"], [0, 1, 2])
    write_newick(odd, tmp_path / "o.nwk")
    assert read_tree(tmp_path / "o.nwk").clades() == odd.clades()
    with pytest.raises(ValueError, match="holds a single quote"):
        write_newick(Tree.from_parents([2, 2, -1], ["x'y", "b"], [0, 1]), tmp_path / "q.nwk")
    assert not (tmp_path / "q.nwk").exists()


def test_restricted_drops_tips_and_names_the_missing():
    t = Tree.from_parents([4, 4, 5, 5, 6, 6, -1], ["a", "b", "c", "d"], [0, 1, 2, 3])
    r = t.restricted(["d", "a", "b"])
    assert sorted(r.names.tolist()) == ["a", "b", "d"]
    assert r.clades() == {frozenset("ab"), frozenset("d"), frozenset("abd")}
    with pytest.raises(ValueError, match=r"no tip in the tree, e.g. \['z'\]"):
        t.restricted(["a", "z"])
