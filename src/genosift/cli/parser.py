"""The ``genosift`` argument parser, built from the options table (:mod:`genosift.cli.options`), and
its usage errors: one line and where to read more, with the genosift spelling of a peer tool's
flag (pyseer, SEER, Scoary) or of a near miss."""
from __future__ import annotations

import argparse
import sys

from .data import (
    convert_command,
    enet_command,
    heritability_command,
    knockoffs_command,
    pairs_command,
    pangenome_command,
    patterns_command,
    score_command,
    select_command,
)
from .info import demo_command, methods_command
from .model import annotate_command, evaluate_command, plot_command, predict_command, report_command
from .options import COMMANDS, GROUPS, OPTIONS, PROGRAM
from .peers import command_hints, peer_hints
from .precompile import precompile_command

#: The function that runs each command of the options table.
RUNS = {"methods": methods_command, "demo": demo_command, "precompile": precompile_command,
        "convert": convert_command, "score": score_command, "select": select_command, "patterns": patterns_command,
        "pairs": pairs_command, "pangenome": pangenome_command, "enet": enet_command,
        "knockoffs": knockoffs_command, "heritability": heritability_command,
        "evaluate": evaluate_command, "predict": predict_command, "report": report_command,
        "annotate": annotate_command, "plot": plot_command}


class Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line naming ``COMMAND --help`` (not the usage),
    and a second line of hints where options typed were another tool's or a near miss of one."""

    hints = ()  # the hints of the command line being parsed, set by ``parse_args``

    def error(self, message):
        hints = f"{self.prog}: {'; '.join(self.hints)}\n" if self.hints else ""
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n{hints}")

    def parse_args(self, args=None, namespace=None):
        argv = sys.argv[1:] if args is None else list(args)
        commands = next((a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction)), {})
        command = next((commands[a] for a in argv if a in commands), self)
        command.hints = peer_hints(argv, {o for a in command._actions for o in a.option_strings})
        if command is self:
            command.hints += command_hints(argv, commands)
        try:
            parsed, extras = self.parse_known_args(argv, namespace)
            if extras:
                command.error(f"unrecognized arguments: {' '.join(extras)}")
            return parsed
        finally:
            command.hints = ()


def build_parser():
    """The ``genosift`` parser: every command with its options; each command runs ``args.func(args)``."""
    parser = Parser(prog="genosift", description="Find the features that matter.")
    for name in PROGRAM:
        _add_option(parser, OPTIONS[name])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help)
        options = command.resolved()
        groups = {g: p.add_argument_group(GROUPS[g]) for g in GROUPS if any(o.group == g for o in options.values())}
        exclusive = {}
        for names in command.exclusive:  # the options of which at most one may be given, in one group
            which = groups[options[names[0]].group].add_mutually_exclusive_group()
            exclusive.update(dict.fromkeys(names, which))
        for option_name, option in options.items():
            _add_option(exclusive.get(option_name, groups[option.group]), option)
        p.set_defaults(func=RUNS[name], **command.defaults)
    return parser


def _add_option(container, option):
    """The one place an option becomes an argument of a parser (or of its group)."""
    keywords = option.argparse_keywords()
    if option.action == "version":
        from .. import __version__

        keywords["version"] = f"%(prog)s {__version__}"
    return container.add_argument(*option.flags, **keywords)
