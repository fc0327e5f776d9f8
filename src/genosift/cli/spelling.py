"""How the command line meets the library: its options as reader parameters, and the library's
messages with their fixes spelled as options (every error ``genosift`` prints goes through
:func:`cli_message`, called in one place, ``genosift.cli.main``)."""
from __future__ import annotations

import functools

# The spellings the options table cannot tell (see ``spellings``): positional arguments, commands,
# an option with a value or a placeholder of its own, and fixes that are sentences.
_SPECIAL_SPELLING = {
    "data": "DATA",
    "ranking": "RANKING",
    ("convert", "inputs"): "INPUTS",
    ("make_report", "results_dir"): "RESULTS",
    "methods": "`genosift methods`",
    "describe": "`genosift methods {}`",
    ("convert", "fits"): "--dtype {}",
    "write_store": "`genosift convert`",
    "read_h5ad": "--format h5ad (into memory)",
    ("attach_metadata", "drop"): "--absent-samples drop",
    ("score_store", "in_memory"): "Read the store into memory with --format h5ad",
    ("dask", "in_memory"): "Leave out --scheduler and read the data into memory (for a store: --format h5ad)",
    "covariates": "--covariates / --covariate",
    ("load_labelled", "convert_keep"): "`genosift convert --keep`",
    ("convert", "read_options"): "the options --sep, --id-column, --keep, --features-in-rows and --missing-genotypes",
    ("Covariates", "structure"): "--structure K",
}


def table_spellings():
    """The spellings the options table gives: each library parameter an option ``feeds`` as its
    first flag, and each it ``shows`` as that flag and its metavar (``--top K``), over every option
    and every command's own version of one."""
    from .options import COMMANDS, OPTIONS

    spelled = {}
    for option in [*OPTIONS.values(), *(o for c in COMMANDS.values() for o in c.resolved().values())]:
        base = OPTIONS[option.name]
        if option is base or option.feeds != base.feeds:
            spelled.update(dict.fromkeys(option.feeds, option.flag))
        if option is base or option.shows != base.shows:  # a command's own, with its own metavar
            spelled.update(dict.fromkeys(option.shows, f"{option.flag} {option.metavar}"))
    return spelled


@functools.cache
def spellings():
    """How the command line spells the parameters that library messages name (see FixError): by
    (function, parameter) first, then by parameter. Every message the command prints goes through
    this one table, so its fixes name options a user can type."""
    spelled = table_spellings()
    clash = {k for k in _SPECIAL_SPELLING if k in spelled}
    assert not clash, f"spelled both by the options table and by hand: {sorted(map(str, clash))}"
    return {**spelled, **_SPECIAL_SPELLING}


def cli_spelling(owner, name, value):
    """A library parameter as the option (and value) a user types, e.g. ``--keep label``."""
    import shlex

    from ..core.messages import FixError, PythonText

    table = spellings()
    option = table.get((owner, name)) or table.get(name) or "--" + name.replace("_", "-")
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


# the command-line options that become reader parameters: reader parameter -> option name
_READ_OPTIONS = {"sep": "sep", "id_column": "id-column", "keep": "keep", "features_in_rows": "features-in-rows",
                 "missing": "missing-genotypes"}


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
        from .options import OPTIONS

        refused = [OPTIONS[_READ_OPTIONS[k]].flag for k in options if k not in accepted]
        if refused:
            takes = sorted(f for f, r in READERS.items()
                           if set(options) & r.parameters)
            what = (f"a store ({str(data)!r}): its samples are rows already" if name == "store"
                    else f"{name} files ({str(data)!r}); they are for the formats {takes}")
            raise ValueError(f"The option(s) {', '.join(refused)} do not apply to {what}.")
    if "keep" in options:
        options["keep"] = tuple(options["keep"])
    return options
