"""Progress lines of the command line's long jobs, written to stderr.

On a terminal a line is rewritten in place (at most every 0.2 s); otherwise
(logs, CI) a new line comes every PROGRESS_INTERVAL seconds.
"""
import math
import sys
import time

#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_INTERVAL = 2.0


def _err(line):
    print(line, file=sys.stderr)


def _hms(seconds):
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"



class RunProgress:
    """Prints runs done, ETA and the running median test error to stderr."""

    def __init__(self, quiet=False):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = -math.inf

    def __call__(self, p):
        if self.quiet:
            return
        now = time.monotonic()
        final = p.done == p.todo
        if not final and now - self.last < (0.2 if self.tty else PROGRESS_INTERVAL):
            return
        self.last = now
        r = p.record
        line = (f"[{p.done:{len(str(p.todo))}d}/{p.todo}] {100 * p.done / p.todo:5.1f}%  "
                f"elapsed {_hms(p.elapsed)}  ETA {_hms(p.eta)}  median test E "
                f"{p.median_test_error:.3f}  (last: {r['problem']} {r['network']} run {r['run']})")
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if final else ""))
            sys.stderr.flush()
        else:
            _err(line)


class EpochProgress:
    """Training callback of ``fastnet train``: epoch, errors and GL on stderr.

    It returns None (never stops training) and writes at most every 0.2 s on a
    terminal, every PROGRESS_INTERVAL seconds otherwise, so the run is the same
    as without it and its CPU time barely moves.
    """

    def __init__(self, max_epochs):
        self.max_epochs = max_epochs
        self.tty = sys.stderr.isatty()
        self.last = time.monotonic()
        self.shown = False

    def __call__(self, epoch, state):
        now = time.monotonic()
        if now - self.last < (0.2 if self.tty else PROGRESS_INTERVAL):
            return None
        self.last = now
        of = f"/{self.max_epochs}" if self.max_epochs else ""
        line = f"epoch {epoch}{of}  E_tr {state.train_errors[-1]:.3f}"
        if state.has_validation:
            line += f"  E_va {state.val_error:.3f}  GL {state.gl:.2f}"
        if self.tty:
            sys.stderr.write("\r" + line)
            sys.stderr.flush()
            self.shown = True
        else:
            _err(line)
        return None

    def finish(self):
        if self.shown:   # end the line the carriage returns kept rewriting
            sys.stderr.write("\n")
            sys.stderr.flush()


class TaskProgress:
    """Progress of ``fastnet demo`` on stderr: task, runs done and elapsed time.

    ``progress(task, i_task, n_tasks, done, runs)`` is `run_demo`'s progress
    callback. On a terminal the line is rewritten in place (the last one of each
    task stays); otherwise a line is written at each task's start and end and at
    most every PROGRESS_INTERVAL seconds between.
    """

    def __init__(self, quiet=False):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.last = -math.inf

    def __call__(self, task, i_task, n_tasks, done, runs):
        if self.quiet:
            return
        now = time.monotonic()
        edge = done in (0, runs)
        if not edge and now - self.last < (0.2 if self.tty else PROGRESS_INTERVAL):
            return
        self.last = now
        line = (f"[task {i_task}/{n_tasks}] {task}: {done:{len(str(runs))}d}/{runs} runs  "
                f"elapsed {_hms(now - self.start)}")
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if done == runs else ""))
            sys.stderr.flush()
        else:
            _err(line)


class StudyLines:
    """Progress of ``fastnet study`` on stderr: `run_study`'s lines, each algorithm's
    count of trials done and its ETA rewritten in place on a terminal; otherwise the
    interim counts at most every PROGRESS_INTERVAL seconds (every other line always)."""

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.last = -math.inf
        self.open = False          # a rewritten line awaits its end

    def __call__(self, line):
        interim = getattr(line, "kind", None) == "chunk"
        now = time.monotonic()
        if interim and now - self.last < (0.2 if self.tty else PROGRESS_INTERVAL):
            return
        if interim:
            self.last = now
        if self.tty and interim:
            sys.stderr.write("\r" + line + "\x1b[K")
            self.open = True
        else:
            sys.stderr.write(("\r" if self.open else "") + line + "\x1b[K\n"
                             if self.tty else line + "\n")
            self.open = False
        sys.stderr.flush()
