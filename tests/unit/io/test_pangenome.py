"""Roary's and Panaroo's gene_presence_absence.csv: isolates in rows, genes in columns, the annotation as var.

Each table is compared with what its text says cell by cell (read with the csv module here), and
Scoary's example table with its own ``No. isolates`` column, which counts the isolates of each gene.
"""
import csv
import gzip
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import genosift as gs
from genosift.io import format_of, open_store, read, sniff_format, write_store
from genosift.io.pangenome import is_gene_presence_absence

DATA = Path(__file__).resolve().parents[2] / "data" / "scoary"
ROARY_HEAD = ('"Gene","Non-unique Gene name","Annotation","No. isolates","No. sequences","Avg sequences per isolate",'
              '"Genome Fragment","Order within Fragment","Accessory Fragment","Accessory Order with Fragment","QC",'
              '"Min group size nuc","Max group size nuc","Avg group size nuc"')
ROARY = (ROARY_HEAD + ',"iso_A","iso_B","iso_C"\n'
         '"tetM","tetM_1","tetracycline resistance protein, ribosomal protection","2","3","1.5","1","1","","","",'
         '"1920","1923","1921.5","A_00012;A_00013","","C_00407"\n'
         '"group_17","","hypothetical protein","1","1","1","2","1","1","1","","300","300","300","","B_01\tB_02", 0\n'
         '"mecA","","penicillin-binding protein 2\'","1","1","1","3","4","","","","2007","2007","2007","-", ,"C_9"\n')
PANAROO = ("Gene,Non-unique Gene name,Annotation,iso_1,iso_2\n"
           "pbp1~~~pbp1a,pbp1;pbp1a,penicillin-binding protein,s1_001_len,\n"
           "group_3,,hypothetical protein,,s2_007;s2_008_stop\n")


def _presence(path, first):
    """The presence matrix (isolates x genes) that the text of ``path`` says: a cell is present
    unless it is empty, 0 or - (spaces after the comma are not part of it)."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh, skipinitialspace=True))
    cells = [[c not in ("", "0", "-") for c in row[first:]] for row in rows[1:]]
    return np.array(cells, dtype=np.int8).T, rows


def test_roary_table_reads_as_isolates_by_genes_with_its_annotation(tmp_path):
    path = tmp_path / "gene_presence_absence.csv"
    path.write_text(ROARY)
    data = read(path)
    expected, rows = _presence(path, 14)
    assert sp.isspmatrix_csr(data.X) and data.X.dtype == np.int8
    np.testing.assert_array_equal(data.X.toarray(), expected)
    assert expected.tolist() == [[1, 0, 0], [0, 1, 0], [1, 0, 1]]  # ";" paralogues, a tab, " 0", "-", " "
    assert data.sample_ids.tolist() == ["iso_A", "iso_B", "iso_C"]
    assert data.feature_names.tolist() == ["tetM", "group_17", "mecA"]
    assert data.var.index.name == "Gene" and data.var.index.tolist() == ["tetM", "group_17", "mecA"]
    assert data.var.columns.tolist() == rows[0][1:14]
    assert data.var.loc["tetM", "Annotation"] == "tetracycline resistance protein, ribosomal protection"
    assert data.var.loc["tetM", "Avg group size nuc"] == "1921.5"  # text, exactly as written
    assert data.var.loc["mecA", "Annotation"] == "penicillin-binding protein 2'"
    assert data.obs is None and data.ploidy is None


def test_panaroo_table_and_detection_by_suffix_compression_and_content(tmp_path):
    plain = tmp_path / "gene_presence_absence.csv"
    plain.write_text(PANAROO)
    packed = tmp_path / "gpa.csv.gz"
    packed.write_bytes(gzip.compress(PANAROO.encode()))
    unnamed = tmp_path / "gpa"
    unnamed.write_text(PANAROO)
    assert [format_of(p) for p in (plain, packed, unnamed)] == ["gene_presence_absence"] * 3
    expected, _ = _presence(plain, 3)
    for path in (plain, packed, unnamed):
        data = read(path)
        np.testing.assert_array_equal(data.X.toarray(), expected)
        assert data.var.columns.tolist() == ["Non-unique Gene name", "Annotation"]
    assert expected.tolist() == [[1, 0], [0, 1]]
    assert data.var.loc["pbp1~~~pbp1a", "Non-unique Gene name"] == "pbp1;pbp1a"
    other = tmp_path / "table.csv"
    other.write_text("sample,Gene,Annotation\ns1,1,2\n")
    assert format_of(other) == "csv" and sniff_format(other) == "csv"
    assert is_gene_presence_absence(ROARY_HEAD.encode()[:60]) and not is_gene_presence_absence(b"Gene,Annotation")


def test_scoary_example_excerpt_matches_its_isolate_counts():
    path = DATA / "gene_presence_absence_excerpt.csv"
    data = gs.io.read(path)
    expected, rows = _presence(path, 14)
    assert data.shape == (100, 24)
    assert data.sample_ids.tolist() == rows[0][14:]
    np.testing.assert_array_equal(data.X.toarray(), expected)
    counts = np.asarray(data.X.sum(axis=0)).ravel()
    np.testing.assert_array_equal(counts, data.var["No. isolates"].astype(int).to_numpy())
    assert counts[data.feature_names.tolist().index("TetRCG")] == 37


def test_var_is_kept_by_metadata_joins_and_the_store(tmp_path):
    data = read(DATA / "gene_presence_absence_excerpt.csv")
    meta = gs.io.read_metadata(DATA / "Tetracycline_resistance.csv", id_column=None)
    joined, _ = gs.io.attach_metadata(data, meta.drop(index=["Isolate_5"]))
    assert joined.shape == (99, 24) and joined.var is data.var
    path = write_store(joined, tmp_path / "g.gs.h5ad")
    store = open_store(path)
    assert store.var.index.name == "Gene" and store.var.equals(data.var)
    back = store.to_dataset()
    assert (back.X != joined.X).nnz == 0 and back.var.equals(data.var)
    loaded = gs.jobs.Samples(path, target="Tetracycline_resistance").load().dataset  # rows left on disk
    assert loaded.var.equals(data.var)


@pytest.mark.parametrize("text, message", [
    (ROARY_HEAD + "\n", r"no isolate column after them"),
    ("Gene,Non-unique Gene name,Annotation,a,b\ng1,,x,1,1\ng2,,y,1\n", r"line 3 has 4 fields but the header \(line 1\) "
                                                                       r"has 5, splitting on ','.*quoted"),
    ("Gene,Non-unique Gene name,Annotation,a,b\ng1,,x,1,\x000\n", r"holds a NUL byte"),
    ("Gene,Non-unique Gene name,Annotation,a,b\ng1,,x,1,0\ng1,,y,0,1\n", r"duplicated genes \(column 'Gene'\): 'g1'"),
    ("Gene,Non-unique Gene name,Annotation,a,a\ng1,,x,1,0\n", r"duplicated isolate names"),
    ("Gene,Non-unique Gene name,Annotation,a,b\n,,x,1,0\n", r"line 2 has no gene name"),
    ("Gene,Non-unique Gene name,Annotation,a,b\n", r"no gene rows"),
])
def test_malformed_tables_are_named_with_the_line(tmp_path, text, message):
    path = tmp_path / "gpa.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read(path)


def test_damaged_compression_and_another_table_given_as_one(tmp_path):
    packed = tmp_path / "gpa.csv.gz"
    packed.write_bytes(gzip.compress(PANAROO.encode() * 50)[:-30])
    with pytest.raises(ValueError, match=r"gpa\.csv\.gz'.*damaged"):
        read(packed, format="gene_presence_absence")
    other = tmp_path / "table.csv"
    other.write_text("sample,a\ns1,1\n")
    with pytest.raises(ValueError, match=r"not a gene presence/absence table .* starts with 'sample', 'a'"):
        read(other, format="gene_presence_absence")
    named = tmp_path / "gene_presence_absence.csv"  # the tools' name says the format
    named.write_text("sample,a\ns1,1\n")
    with pytest.raises(ValueError, match=r"not a gene presence/absence table .* Read it as the table it is "
                                         r"\(format='csv'\)"):
        read(named)
    assert read(named, format="csv").X.tolist() == [[1.0]]
