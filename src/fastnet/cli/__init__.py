"""The ``fastnet`` command line (also ``python -m fastnet``).

Only this package prints: ``_parser`` builds the parser, ``_commands`` runs the
subcommands, ``_study`` is ``fastnet study``, ``_progress`` writes the progress lines,
``_common`` holds the exit statuses, option types and user-error wording.

Subcommands: ``datasets`` (``list``, ``fetch``), ``train`` (one run), ``bench`` (an
experiment to a result file), ``report``, ``compare``, ``reproduce proben1 ...`` and
``demo`` and ``study`` (:mod:`fastnet.study`). Every one has ``--help``. User errors (unknown problems, missing data,
malformed result files) print one ``fastnet: error: ...`` line to stderr and return
a non-zero status, without a traceback.
"""
import os
import sys
import warnings

from fastnet.cli._common import (EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, EXIT_USER_ERROR,
                                 Terminated, _command_parser, _err, _in_options, _UserError,
                                 loaded_rules, on_sigterm)
from fastnet.cli._parser import build_parser

__all__ = ["main", "build_parser", "EXIT_USER_ERROR", "EXIT_USAGE", "EXIT_INTERRUPTED",
           "EXIT_TERMINATED"]


def main(argv=None):
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 for errors the user can fix (the message says how), 2 for
        usage errors, 130 after Ctrl-C (SIGINT), 143 after SIGTERM.

    Notes
    -----
    SIGTERM (``kill PID``, a batch system or a container stopping the job) is handled
    as Ctrl-C is: the command says what it saved, ends its worker processes and frees
    its locks, then returns 143 (128 + 15) instead of 130 (128 + 2). A study, suite or
    experiment so stopped resumes when run again.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help and usage errors: argparse already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if getattr(args, "func", None) is None:
        (getattr(args, "subparser", None) or parser).print_help(sys.stderr)
        return EXIT_USAGE
    from fastnet.exceptions import DataFormatError, DivergenceError, TrainingInProgressError
    from fastnet.experiment import ResultFileError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        try:
            with on_sigterm(), loaded_rules(args):     # (--rules: for this command only)
                status = args.func(args)
        except KeyboardInterrupt as exc:
            status = EXIT_INTERRUPTED
            if isinstance(exc, Terminated):
                _err(f"fastnet: stopped by SIGTERM (exit status {EXIT_TERMINATED}).")
                status = EXIT_TERMINATED
        except (_UserError, ResultFileError, DataFormatError, FileNotFoundError,
                ConnectionError, ImportError, DivergenceError, TrainingInProgressError) as exc:
            _err(f"fastnet: error: {_in_options(str(exc), _command_parser(parser, args.func))}")
            status = EXIT_USER_ERROR
        except (ValueError, TypeError, OSError) as exc:
            # The library's argument checks name the argument in backticks (given here
            # as the option typed); set FASTNET_DEBUG=1 to see the traceback.
            if os.environ.get("FASTNET_DEBUG", "0") != "0":
                raise
            _err(f"fastnet: error: {_in_options(str(exc), _command_parser(parser, args.func))}")
            status = EXIT_USER_ERROR
        finally:
            for w in caught:
                _err(f"fastnet: warning: {w.message}")
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
