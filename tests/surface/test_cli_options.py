"""The command line's options table (``genosift.cli.options``): the parser is built from it whole,
every option has one group and one help, ``--help`` shows the groups, usage errors are one line
and the fix, peers' flags get their genosift spelling, and the fixes' spelling derived from the
table is the one written by hand before."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from genosift.cli import build_parser, main
from genosift.cli.options import COMMANDS, GROUPS, OPTIONS, PROGRAM
from genosift.cli.peers import PEER_FLAGS
from genosift.cli.spelling import cli_spelling, spellings, table_spellings


def _commands():
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code, capsys.readouterr().err


def test_every_argument_of_every_command_comes_from_the_table():
    commands = _commands()
    assert list(commands) == list(COMMANDS)
    used = set(PROGRAM)
    for name, sub in commands.items():
        options = COMMANDS[name].resolved()
        used |= set(options)
        got = [tuple(a.option_strings) or (a.dest,) for a in sub._actions if a.dest != "help"]
        assert sorted(got) == sorted(o.flags if o.flags[0].startswith("-") else (o.dest or o.flags[0],)
                                     for o in options.values()), name
        for action in sub._actions:
            if action.dest == "help":
                continue
            option = next(o for o in options.values() if action.option_strings == list(o.flags)
                          or not action.option_strings and action.dest == o.flags[0])
            assert (action.help, action.type) == (option.help, option.type), (name, option.name)
            assert not action.option_strings or action.required == option.required, (name, option.name)
            assert option.default is None or action.default == option.default, (name, option.name)
    assert used == set(OPTIONS), "options of no command"


def test_every_option_has_a_group_and_a_help_and_each_help_is_written_once():
    for name, command in COMMANDS.items():
        for option in command.resolved().values():
            assert option.group in GROUPS, (name, option.name)
            assert option.help and option.help == option.help.strip(), (name, option.name)
    declared = {}  # flag -> every help text the table writes for it
    for option in OPTIONS.values():
        declared.setdefault(option.flags, []).append(option.help)
    for command in COMMANDS.values():
        for entry in command.options:
            if isinstance(entry, tuple) and "help" in entry[1]:
                declared[OPTIONS[entry[0]].flags].append(entry[1]["help"])
    twice = {flags: helps for flags, helps in declared.items() if len(set(helps)) < len(helps)}
    assert twice == {}
    # --chunk-bytes, once written six times: one text, and convert's own (its budget spills to disk)
    assert len(declared[("--chunk-bytes",)]) == 2


def test_options_that_exclude_each_other_are_declared_in_the_table(capsys):
    code, err = _usage_error(["score", "d.tsv", "--target", "y", "-o", "o.tsv", "--kinship", "k.tsv",
                              "--kinship-from-data"], capsys)
    assert code == 2 and "argument --kinship-from-data: not allowed with argument --kinship" in err
    code, err = _usage_error(["annotate", "r.tsv", "--references", "refs.txt", "-o", "h.tsv", "--top", "3",
                              "--all"], capsys)
    assert code == 2 and "argument --all: not allowed with argument --top" in err


def test_score_help_shows_the_groups():
    text = _commands()["score"].format_help()
    headings = [line[:-1] for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert headings == ["options", *GROUPS.values()]
    section = {}
    for line in text.splitlines():
        if line in (f"{h}:" for h in GROUPS.values()):
            current = line[:-1]
        elif line.startswith("  -") and "current" in locals():
            section[line.split()[0]] = current
    assert section["--kinship"] == GROUPS["adjustment"] and section["--chunk-bytes"] == GROUPS["resources"]
    assert section["--target"] == GROUPS["samples"] and section["--top"] == GROUPS["selection"]
    assert section["--format"] == GROUPS["input"] and section["-o"] == GROUPS["output"]


def test_a_usage_error_is_one_line_and_the_fix_not_the_usage(capsys):
    code, err = _usage_error(["score", "d.tsv", "-o", "o.tsv"], capsys)
    assert code == 2
    assert err == ("genosift score: error: the following arguments are required: --target "
                   "(see `genosift score --help`)\n")
    code, err = _usage_error(["score", "d.tsv", "--target", "y", "-o", "o.tsv", "--top", "x"], capsys)
    assert err == ("genosift score: error: argument --top: must be a whole number >= 1, got 'x' "
                   "(see `genosift score --help`)\n")
    code, err = _usage_error(["score", "d.tsv", "--target", "y", "-o", "o.tsv", "--zzz"], capsys)
    assert err == "genosift score: error: unrecognized arguments: --zzz (see `genosift score --help`)\n"
    code, err = _usage_error([], capsys)
    assert code == 2 and err == ("genosift: error: the following arguments are required: command "
                                 "(see `genosift --help`)\n")


def test_a_usage_error_from_the_installed_command():
    done = subprocess.run([sys.executable, "-m", "genosift", "pairs", "d.tsv", "-o", "p.tsv"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("genosift pairs: error: the following arguments are required: --target "
                           "(see `genosift pairs --help`)\n")


def _hint(argv, capsys):
    code, err = _usage_error(argv, capsys)
    assert code == 2 and "usage:" not in err
    lines = err.splitlines()
    assert len(lines) == 2, err
    return lines


_SCORE = ["score", "d.tsv", "--target", "y", "-o", "o.tsv"]


@pytest.mark.parametrize("flags, hint", [
    (["--phenotypes", "p.tsv"], "pyseer's --phenotypes FILE: use --meta FILE --target COLUMN"),
    (["--kmers", "k.txt"], "pyseer's --kmers FILE: give the file as the DATA argument"),
    (["--vcf", "x.vcf"], "pyseer's --vcf FILE: give the file as the DATA argument"),
    (["--lmm"], "pyseer's --lmm: use --method lmm --method-option model=linear (pyseer's linear mixed model"),
    (["--similarity", "k.tsv"], "pyseer's --similarity FILE: use --kinship FILE"),
    (["--distances", "d.tsv"], "pyseer's --distances FILE: use --structure K, computed from the data themselves"),
    (["--cpu", "4"], "pyseer's --cpu N: use --threads N"),
    (["--uncompressed"], "pyseer's --uncompressed: not needed"),
    (["--print-samples"], "pyseer's --print-samples: not an option of the ranking: `genosift select`"),
    (["--maf", "0.01"], "SEER's --maf F: use --min-af F"),
    (["-t", "traits.csv"], "Scoary's -t FILE: use --meta FILE --target COLUMN"),
    (["--genes", "gpa.csv"], "Scoary's --genes FILE: give the file as the DATA argument"),
    (["-n", "tree.nwk"], "Scoary's -n TREE: use `genosift pangenome ... --tree TREE`"),
    (["-p", "0.05"], "Scoary's -p P: use --threshold P"),
    (["--correction", "BH"], "Scoary's --correction METHOD: use --fdr Q (Benjamini-Hochberg) or --threshold "
                             "bonferroni"),
])
def test_a_peer_tools_flag_gets_the_genosift_spelling(capsys, flags, hint):
    error, hints = _hint([*_SCORE, *flags], capsys)
    assert error == (f"genosift score: error: unrecognized arguments: {' '.join(flags)} "
                     "(see `genosift score --help`)")
    assert hints.startswith(f"genosift score: {hint}")


def test_peer_hints_with_another_error_and_with_each_other(capsys):
    # pyseer's command line as typed: the missing --target is the error, the hints say what to type
    error, hints = _hint(["score", "--phenotypes", "p.tsv", "--kmers", "k.txt", "--lmm", "-o", "o.tsv"], capsys)
    assert error.endswith("the following arguments are required: --target (see `genosift score --help`)")
    assert hints == ("genosift score: pyseer's --phenotypes FILE: use --meta FILE --target COLUMN; pyseer's "
                     "--kmers FILE: give the file as the DATA argument (its format is told by the file, else by "
                     "--format); pyseer's --lmm: use --method lmm --method-option model=linear (pyseer's linear "
                     "mixed model; lmm's default for two classes is the logistic one), with --kinship FILE or "
                     "--kinship-from-data")
    # SEER's --struct is a prefix of four genosift options: argparse's ambiguity, with the hint
    error, hints = _hint([*_SCORE, "--struct", "s.tsv"], capsys)
    assert "ambiguous option: --struct could match --structure, --structure-metric" in error
    assert hints.startswith("genosift score: SEER's --struct FILE: use --structure K")


def test_a_near_miss_of_an_option_names_it_and_a_commands_own_flag_gets_no_hint(capsys):
    error, hints = _hint(["score", "d.tsv", "--taget", "y", "-o", "o.tsv"], capsys)
    assert hints == "genosift score: --taget: did you mean --target?"
    error, hints = _hint([*_SCORE, "--chunk-byte", "1M", "--threds", "2"], capsys)  # --chunk-byte: a prefix
    assert error.endswith("unrecognized arguments: --threds 2 (see `genosift score --help`)")
    assert hints == "genosift score: --threds: did you mean --threads?"
    error, hints = _hint(["scor", "d.tsv"], capsys)
    assert error.startswith("genosift: error: argument command: invalid choice: 'scor'")
    assert hints == "genosift: scor: did you mean score?"
    # annotate has a --genes of its own (the gene summary): given without its value, no Scoary hint
    code, err = _usage_error(["annotate", "r.tsv", "--references", "refs.txt", "-o", "h.tsv", "--genes"], capsys)
    assert err == "genosift annotate: error: argument --genes: expected one argument (see `genosift annotate --help`)\n"


def test_peer_hints_name_only_options_genosift_has():
    flags = {f for sub in _commands().values() for a in sub._actions for f in a.option_strings}
    named = {f for _, _, ours in PEER_FLAGS.values() for f in re.findall(r"(?<![\w-])--[a-z][a-z-]*", ours)}
    assert named and named <= flags, named - flags
    assert not set(PEER_FLAGS) & {f for f in flags if f in COMMANDS["score"].resolved()}


#: The entries of the hand-written spelling table that the options table now gives, as they were.
FORMER_HAND_SPELLING = {
    "sep": "--sep", "id_column": "--id-column", "keep": "--keep", "features_in_rows": "--features-in-rows",
    "method": "--method", "overwrite": "--force", "chunk_bytes": "--chunk-bytes", "format": "--format",
    "covariate": "--covariate", "model_options": "--model-option", "max_contig": "--max-contig",
    "scheduler": "--scheduler",
    ("read_vcf", "missing"): "--missing-genotypes", ("read_plink", "missing"): "--missing-genotypes",
    ("make_report", "out_html"): "-o", ("make_report", "png_dir"): "--png-dir",
    ("make_report", "hits"): "--hits TABLE", ("make_report", "ranking"): "--ranking TABLE",
    ("read_metadata", "id_column"): "--id", ("read_metadata", "sep"): "--meta-sep",
    ("attach_metadata", "id_column"): "--id", ("attach_metadata", "sep"): "--meta-sep",
    ("attach_metadata", "data_id"): "--id-column", ("attach_metadata", "data_sep"): "--sep",
    ("attach_metadata", "absent"): "--absent-samples", ("attach_metadata", "meta"): "--meta",
    ("attach_metadata", "keep"): "--keep COLUMNS",
    ("match_covariates", "covariates"): "--covariates", ("labelled_covariates", "covariates"): "--covariates",
    ("match_covariates", "covariates_id"): "--covariates-id", ("read_covariates", "id_column"): "--covariates-id",
    ("read_covariates", "sep"): "--covariates-sep",
    ("check_options", "method_options"): "--method-option",
    ("load_labelled", "target"): "--target", ("load_labelled", "group_column"): "--group",
    ("load_labelled", "meta"): "--meta", ("load_labelled", "id_column"): "--id",
    ("load_labelled", "train_groups"): "--train-groups", ("load_labelled", "val_groups"): "--val-groups",
    ("load_labelled", "classes"): "--classes",
    ("select_mask", "top"): "--top K", ("select", "top"): "--top K", ("select", "fdr"): "--fdr Q",
    ("select", "threshold"): "--threshold", ("select_mask", "threshold"): "--threshold",
    ("select_mask", "fdr"): "--fdr",
    ("plot", "qq"): "--qq PNG", ("plot", "manhattan"): "--manhattan PNG", ("plot", "hits"): "--hits TABLE",
    ("plot", "phandango"): "--phandango FILE", ("plot", "reference"): "--reference NAME",
    ("annotate", "top"): "--top N", ("annotate", "pvalue"): "--pvalue P", ("annotate", "every"): "--all",
    ("annotate", "max_occurrences"): "--max-occurrences N",
    ("true_labels", "target"): "--target", ("true_labels", "id_column"): "--id",
    ("true_labels", "absent"): "--absent-samples",
    ("convert", "output"): "-o", ("check_output", "output"): "-o",
    ("Covariates", "table"): "--covariates FILE", ("Covariates", "id_column"): "--covariates-id",
    ("Covariates", "sep"): "--covariates-sep", ("Covariates", "kinship"): "--kinship FILE",
    ("Covariates", "kinship_from_data"): "--kinship-from-data",
    ("score", "kinship"): "--kinship FILE", ("score", "kinship_of_data"): "--kinship-from-data",
    ("predict", "fill_missing"): "--fill-missing", ("predict", "assemblies"): "--assemblies",
    ("predict", "format"): "--format", ("evaluate", "min_count"): "--min-count",
}


def test_the_spelling_derived_from_the_table_is_the_former_hand_written_one():
    assert table_spellings() == FORMER_HAND_SPELLING
    table = spellings()
    assert {k: table[k] for k in FORMER_HAND_SPELLING} == FORMER_HAND_SPELLING
    # the entries still written by hand: what no option of the table says
    assert table["data"] == "DATA" and table[("Covariates", "structure")] == "--structure K"
    from genosift.core.messages import FixError

    assert cli_spelling("read_table", "keep", ["a", "b c"]) == "--keep 'a,b c'"
    assert cli_spelling("select", "top", FixError.ANY) == "--top K"
    assert cli_spelling("read_vcf", "missing", "error") == "--missing-genotypes error"
    assert cli_spelling("anything", "overwrite", True) == "--force"


def test_the_reference_page_lists_the_peer_flags_as_the_command_spells_them():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (pyseer|SEER|Scoary) \| `([^`]+)` \| (.+) \|$", page, flags=re.M)
    assert rows == [(tool, spelled, ours) for tool, spelled, ours in PEER_FLAGS.values()]


def test_the_knockoff_choices_are_the_librarys():
    """`knockoffs` offers the library's statistics and S-matrices (one list each, in
    ``genosift.core.choices``)."""
    from genosift.core.choices import KNOCKOFF_STATISTICS as STATISTICS
    from genosift.core.choices import S_METHODS

    options = COMMANDS["knockoffs"].resolved()
    assert options["statistic"].choices == STATISTICS and options["s-method"].choices == S_METHODS
