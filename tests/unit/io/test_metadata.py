"""Metadata tables as Scoary's traits tables write them: ids in an unnamed first column, 0/1 traits
with ``NA``, ``-``, ``.`` or blanks for missing, and every other table read as before."""
import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import genosift as gs
from genosift.io import read_metadata
from genosift.io.metadata import first_column_is_ids

DATA = Path(__file__).resolve().parents[2] / "data" / "scoary"


def test_scoary_traits_table_reads_its_ids_and_missing_values():
    path = DATA / "Tetracycline_resistance.csv"
    assert first_column_is_ids(path)
    meta = read_metadata(path, id_column=None)
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "" and meta.index.name is None
    assert meta.index.tolist() == [r[0] for r in rows[1:]] and meta.columns.tolist() == rows[0][1:]
    for j, column in enumerate(rows[0][1:], 1):  # each trait: 0/1 where written, NaN where missing
        expected = [float(r[j]) if r[j] in ("0", "1") else np.nan for r in rows[1:]]
        np.testing.assert_array_equal(meta[column].to_numpy(dtype=float), expected)
    assert meta["Tetracycline_resistance"].dtype == np.int64  # no missing value: as pandas reads it
    assert meta["Bogus_trait"].dtype == np.float64
    assert meta["Bogus_trait"].isna().sum() == sum(r[2] in ("NA", "-", ".") for r in rows[1:]) == 3
    assert meta.loc[["Isolate_13", "Isolate_26", "Isolate_79"], "Bogus_trait"].isna().all()  # "NA", "-", "."


def test_missing_marks_only_in_columns_of_zeros_and_ones(tmp_path):
    path = tmp_path / "traits.csv"
    path.write_text("Name,dot,blank,counts,text,marks\n"
                    "a,1,0,2,x,-\n"
                    "b,.,  ,-,-,.\n"
                    "c,0,1,5,.,-\n")
    assert first_column_is_ids(path)
    meta = read_metadata(path, id_column=None)
    assert meta.index.name == "Name"
    np.testing.assert_array_equal(meta["dot"].to_numpy(), [1.0, np.nan, 0.0])
    np.testing.assert_array_equal(meta["blank"].to_numpy(), [0.0, np.nan, 1.0])
    assert meta["counts"].tolist() == ["2", "-", "5"]  # other numbers: a dash stays text
    assert meta["text"].tolist() == ["x", "-", "."]
    assert meta["marks"].tolist() == ["-", ".", "-"]  # nothing but marks: text


def test_named_id_columns_and_other_tables_read_as_before(tmp_path):
    path = tmp_path / "pheno.tsv"
    path.write_text("sample\tresistant\tgroup\n007\t1\tx\ns-2\tNA\t-\n")
    assert not first_column_is_ids(path) and not first_column_is_ids(tmp_path / "absent.csv")
    meta = read_metadata(path, id_column="sample")
    assert meta.index.name == "sample" and meta.index.tolist() == ["007", "s-2"]
    assert meta["resistant"].dtype == np.float64 and meta["group"].tolist() == ["x", "-"]
    pd.testing.assert_frame_equal(read_metadata(path, id_column=None), meta)


def test_a_job_takes_the_unnamed_first_column_as_the_ids():
    samples = gs.jobs.Samples(DATA / "gene_presence_absence_excerpt.csv", target="Bogus_trait",
                              meta=DATA / "Tetracycline_resistance.csv")
    labelled = samples.load()
    meta = read_metadata(DATA / "Tetracycline_resistance.csv", id_column=None)
    kept = meta.index[meta["Bogus_trait"].notna()]
    assert labelled.dataset.sample_ids.tolist() == [s for s in labelled.dataset.sample_ids if s in set(kept)]
    assert len(labelled.y) == len(kept) and labelled.dataset.var is not None
    with pytest.raises(ValueError, match=r"needs"):
        gs.jobs.Samples(DATA / "gene_presence_absence_excerpt.csv", target="Bogus_trait",
                        meta=DATA / "gene_presence_absence_excerpt.csv").load()
