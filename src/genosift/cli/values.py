"""The value types of the command line's options: each turns the text typed into the value a job
receives, or says what it must be (argparse prints it as a usage error)."""
from __future__ import annotations

import argparse


def int_list(text):
    try:
        values = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"must be comma-separated whole numbers >= 1, e.g. 10,100,1000; got {text!r}")
    return values


def key_value(text):
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE, e.g. C=0.1; got {text!r}")
    return key.strip(), _literal(value)


def _literal(text):
    """A value as typed: a Python literal (``0.1``, ``None``, ``{0: 1, 1: 5}``), ``true``, ``false``
    or ``none`` in any case, else the text itself (``balanced``)."""
    import ast

    shell = {"true": True, "false": False, "none": None}
    if text.strip().lower() in shell:
        return shell[text.strip().lower()]
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()  # a plain string, e.g. class_weight=balanced


def _top_level_parts(text):
    """``text`` cut at the commas outside brackets and quotes: ``0.1,{0: 1, 1: 5}`` is two parts."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def key_values(text):
    """``KEY=VALUE`` or ``KEY=V1,V2,...`` (the values of a grid, a list): each value as :func:`_literal`."""
    key, sep, value = text.partition("=")
    parts = _top_level_parts(value)
    if not sep or not key.strip() or any(not p.strip() for p in parts):
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE or KEY=V1,V2,... (values to try), e.g. C=0.1 or "
                                         f"C=0.01,0.1,1; got {text!r}")
    values = [_literal(p) for p in parts]
    return key.strip(), values if len(values) > 1 else values[0]


class OptionsAction(argparse.Action):
    """Collects repeated ``KEY=VALUE`` options into a dict; a key given twice is a usage error."""

    def __call__(self, parser, namespace, values, option_string=None):
        key, value = values
        options = dict(getattr(namespace, self.dest) or {})
        if key in options:
            parser.error(f"{option_string} {key} is given twice; give its values once, comma-separated "
                         f"(e.g. {key}=0.1,1).")
        options[key] = value
        setattr(namespace, self.dest, options)


_SEPARATORS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "space": " ", "pipe": "|"}


def separator(text):
    sep = _SEPARATORS.get(text.lower(), text)
    if len(sep) != 1 or sep in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character such as ',' or ';', or tab; got {text!r}")
    return sep


def column_list(text):
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"must be comma-separated column names, e.g. label,batch; got {text!r}")
    return names


def threshold(text):
    if text in ("bonferroni-patterns", "bonferroni"):
        return text
    value = _number(text)
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be bonferroni-patterns, bonferroni or a p-value in (0, 1]; "
                                         f"got {text!r}")
    return value


def _number(text):
    """``text`` as a float, or None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def min_matched(text):
    value = _number(text)
    if value is not None and 0 < value < 1:
        return value
    if value is not None and value >= 1 and value.is_integer():
        return int(value)
    raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (a count) or a number between 0 and 1 "
                                     f"(a share), e.g. 100 or 0.9; got {text!r}")


def share(text):
    value = _number(text)
    if value is None or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a share of the samples, a number in [0, 1]; got {text!r}")
    return value


def fraction(text):
    value = _number(text)
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text!r}")
    return value


def open_fraction(text):
    value = _number(text)
    if value is None or not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def mixing(text):
    value = _number(text)
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1] (1: the lasso), got {text!r}")
    return value


def folds(text):
    if not text.isdigit() or int(text) == 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of folds >= 2, or 0 for none; got {text!r}")
    return int(text)


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def byte_size(text, what="a size in bytes such as 4096, 64M or 1G"):
    """Bytes from ``123``, ``64K``, ``64M``, ``1.5G``, ``2GiB``... (K, M, G, T are powers of 1024)."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    value = int(float(match[1]) * _UNITS[match[2]]) if match else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def bases(text):
    """Bases from ``300000000``, ``256M``, ``1G``... read as sizes are (K, M, G, T: powers of 1024)."""
    return byte_size(text, "a number of bases such as 300000000, 512M or 1G")


def whole_number(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return int(text)


def method_name(text):
    from ..scores import REGISTRY

    if text not in REGISTRY:
        raise argparse.ArgumentTypeError(f"must be one of {sorted(REGISTRY)} (see `genosift methods`), got {text!r}")
    return text


def structure_metric(text):
    from ..genomics.structure import METRICS

    if text not in METRICS:
        raise argparse.ArgumentTypeError(f"must be one of {list(METRICS)}, got {text!r}")
    return text


def structure_count(text):
    if text == "auto" or text.isdigit() and int(text) >= 1:
        return text if text == "auto" else int(text)
    raise argparse.ArgumentTypeError(f"must be a whole number >= 1 or auto, got {text!r}")


def positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)

