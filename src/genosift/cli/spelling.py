"""How the command line meets the library: its options as reader parameters, and the library's
messages with their fixes spelled as options (every error ``genosift`` prints goes through
:func:`cli_message`, called in one place, ``genosift.cli.main``)."""
from __future__ import annotations

# How the command line spells the parameters that library messages name (see FixError): by
# (function, parameter) first, then by parameter. Every message the command prints goes through
# this one table, so its fixes name options a user can type.
_CLI_SPELLING = {
    "sep": "--sep",
    "id_column": "--id-column",
    "keep": "--keep",
    "features_in_rows": "--features-in-rows",
    "method": "--method",
    "overwrite": "--force",
    "chunk_bytes": "--chunk-bytes",
    "format": "--format",
    ("read_vcf", "missing"): "--missing-genotypes",
    ("read_plink", "missing"): "--missing-genotypes",
    ("make_report", "out_html"): "-o",
    ("make_report", "png_dir"): "--png-dir",
    ("make_report", "results_dir"): "RESULTS",
    ("make_report", "hits"): "--hits TABLE",
    ("make_report", "ranking"): "--ranking TABLE",
    "data": "DATA",
    "ranking": "RANKING",
    ("convert", "inputs"): "INPUTS",
    "methods": "`genosift methods`",
    "describe": "`genosift methods {}`",
    ("convert", "fits"): "--dtype {}",
    "write_store": "`genosift convert`",
    "read_h5ad": "--format h5ad (into memory)",
    ("read_metadata", "id_column"): "--id",
    ("read_metadata", "sep"): "--meta-sep",
    ("attach_metadata", "id_column"): "--id",
    ("attach_metadata", "sep"): "--meta-sep",
    ("attach_metadata", "data_id"): "--id-column",
    ("attach_metadata", "data_sep"): "--sep",
    ("attach_metadata", "absent"): "--absent-samples",
    ("attach_metadata", "drop"): "--absent-samples drop",
    ("score_store", "in_memory"): "Read the store into memory with --format h5ad",
    ("dask", "in_memory"): "Leave out --scheduler and read the data into memory (for a store: --format h5ad)",
    "covariates": "--covariates / --covariate",
    ("match_covariates", "covariates"): "--covariates",
    ("labelled_covariates", "covariates"): "--covariates",
    ("match_covariates", "covariates_id"): "--covariates-id",
    ("read_covariates", "id_column"): "--covariates-id",
    ("read_covariates", "sep"): "--covariates-sep",
    "covariate": "--covariate",
    "model_options": "--model-option",
    ("check_options", "method_options"): "--method-option",
    ("load_labelled", "target"): "--target",
    ("load_labelled", "group_column"): "--group",
    ("load_labelled", "meta"): "--meta",
    ("load_labelled", "id_column"): "--id",
    ("load_labelled", "train_groups"): "--train-groups",
    ("load_labelled", "val_groups"): "--val-groups",
    ("load_labelled", "classes"): "--classes",
    ("load_labelled", "convert_keep"): "`genosift convert --keep`",
    ("select_mask", "top"): "--top K",
    ("select", "top"): "--top K",
    ("select", "fdr"): "--fdr Q",
    ("select", "threshold"): "--threshold",
    ("select_mask", "threshold"): "--threshold",
    ("plot", "qq"): "--qq PNG",
    ("plot", "manhattan"): "--manhattan PNG",
    ("plot", "hits"): "--hits TABLE",
    ("plot", "phandango"): "--phandango FILE",
    ("plot", "reference"): "--reference NAME",
    ("annotate", "top"): "--top N",
    ("annotate", "pvalue"): "--pvalue P",
    ("annotate", "every"): "--all",
    ("annotate", "max_occurrences"): "--max-occurrences N",
    "max_contig": "--max-contig",
    ("select_mask", "fdr"): "--fdr",
    ("true_labels", "target"): "--target",
    ("true_labels", "id_column"): "--id",
    ("true_labels", "absent"): "--absent-samples",
    ("attach_metadata", "meta"): "--meta",
    ("attach_metadata", "keep"): "--keep COLUMNS",
    ("convert", "output"): "-o",
    ("convert", "read_options"): "the options --sep, --id-column, --keep, --features-in-rows and --missing-genotypes",
    ("Covariates", "table"): "--covariates FILE",
    ("Covariates", "id_column"): "--covariates-id",
    ("Covariates", "sep"): "--covariates-sep",
    ("Covariates", "structure"): "--structure K",
    ("Covariates", "kinship"): "--kinship FILE",
    ("Covariates", "kinship_from_data"): "--kinship-from-data",
    ("score", "kinship"): "--kinship FILE",
    ("score", "kinship_of_data"): "--kinship-from-data",
    "scheduler": "--scheduler",
    ("check_output", "output"): "-o",
    ("predict", "fill_missing"): "--fill-missing",
    ("predict", "assemblies"): "--assemblies",
    ("predict", "format"): "--format",
    ("evaluate", "min_count"): "--min-count",
}


def cli_spelling(owner, name, value):
    """A library parameter as the option (and value) a user types, e.g. ``--keep label``."""
    import shlex

    from ..core.messages import FixError, PythonText

    option = _CLI_SPELLING.get((owner, name)) or _CLI_SPELLING.get(name) or "--" + name.replace("_", "-")
    if isinstance(value, PythonText) and "{}" in option:  # a fix whose spelling takes its values
        return option.format(*value.args)
    if value is FixError.ANY or value is True or isinstance(value, PythonText):
        return option
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return f"{option} {shlex.quote(str(value))}"


def cli_message(exc):
    """The text of ``exc`` as the command prints it: fixes spelled as options, control characters
    (from data quoted in it) escaped."""
    from ..core.messages import Spelled, printable

    return printable(exc.spelled(cli_spelling) if isinstance(exc, Spelled) else str(exc))


# the command-line options that become reader parameters, by parameter
_READ_OPTIONS = {"sep": "--sep", "id_column": "--id-column", "keep": "--keep",
                 "features_in_rows": "--features-in-rows", "missing": "--missing-genotypes"}


def read_options(args, data=None):
    """Reader parameters from the options (only those given), checked against the reader of ``data``."""
    from ..io import READERS, format_of

    keep = [c for group in (getattr(args, "keep", None) or []) for c in group]
    given = {"sep": getattr(args, "sep", None), "id_column": getattr(args, "id_column", None),
             "keep": keep or None, "features_in_rows": getattr(args, "features_in_rows", False) or None,
             "missing": getattr(args, "missing_genotypes", None)}
    options = {k: v for k, v in given.items() if v is not None}
    if not options:  # nothing to check against a reader (nor a format to tell)
        return options
    data = args.data if data is None else data
    name = args.format or format_of(data)
    if options and name in READERS:
        accepted = READERS[name].parameters
        refused = [_READ_OPTIONS[k] for k in options if k not in accepted]
        if refused:
            takes = sorted(f for f, r in READERS.items()
                           if set(options) & r.parameters)
            what = (f"a store ({str(data)!r}): its samples are rows already" if name == "store"
                    else f"{name} files ({str(data)!r}); they are for the formats {takes}")
            raise ValueError(f"The option(s) {', '.join(refused)} do not apply to {what}.")
    if "keep" in options:
        options["keep"] = tuple(options["keep"])
    return options
