# toolwarden's Python stand-by: the first program of a warm sandbox booted
# for python scripts (sandbox/standby.go). The interpreter starts while the
# sandbox waits, so a run skips Python's start-up as well as the boot.
#
# It reads the run from its standard input as warmInit does (the
# RLIMIT_CPU, then the environment and argv; an empty or cut input ends it
# with status 125), after a line with the job's length in bytes (a read in
# gVisor costs tens of microseconds: the job comes in one or two reads, not
# a byte at a time), and without reading past it: the rest is the script's
# own stdin. A run of this interpreter with its flags (sys.argv[1:], the
# command line of the runs it expects), then an absolute script path, and
# this process's environment runs here as `python3 <flags> <script>`
# would: same sys.argv and sys.orig_argv, a fresh __main__ namespace, the
# file compiled under its path, tracebacks and exit status as Python
# prints and sets them. Any other run replaces this process (execve), as
# env -i would start it.
import os
import sys


def _toolwarden_standby():
    def read(n):
        b = bytearray()
        while len(b) < n:
            c = os.read(0, n - len(b))
            if not c:
                os._exit(125)
            b += c
        return bytes(b)

    try:
        size = bytearray()
        while not size.endswith(b"\n"):
            if len(size) > 9:
                os._exit(125)
            size += read(1)
        lines = iter(read(int(size)).split(b"\n"))
        cpu = next(lines)
        if cpu != b"-":
            import resource

            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu)))
            del sys.modules["resource"]
        items = []
        for _ in range(int(next(lines))):
            items.append(b"\n".join([next(lines) for _ in range(int(next(lines)))]))
    except Exception:
        os._exit(125)

    pairs = []
    while items and b"=" in items[0]:
        pairs.append(tuple(items.pop(0).split(b"=", 1)))
    argv = items
    if not argv:
        os._exit(125)
    prog = [os.fsencode(a) for a in sys.argv[1:]]
    code = None
    # In place only with this process's environment: the same entries,
    # each once (runsc may pass them in another order than the run's).
    same_env = len(dict(pairs)) == len(pairs) and dict(pairs) == dict(os.environb)
    if argv[: len(prog)] == prog and len(argv) > len(prog) and argv[len(prog)].startswith(b"/") and same_env:
        code = _toolwarden_compile(argv[len(prog)])
    if code is None:
        _toolwarden_exec(argv, pairs)
    return [os.fsdecode(a) for a in argv], code


def _toolwarden_compile(path):
    # The script's code, or the SyntaxError Python reports on its own
    # lines; None for what python3 itself must report (a file it cannot
    # read, or whose bytes it cannot decode, or that holds a NUL byte:
    # compile() words those otherwise).
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError:
        return None
    if b"\0" in src:
        return None
    try:
        return compile(src, os.fsdecode(path), "exec", dont_inherit=True)
    except SyntaxError as e:
        # compile() decodes the bytes otherwise than python3's reading of
        # a file: a decoding error is python3's to report.
        if not e.lineno or str(e.msg).startswith("(unicode error)"):
            return None
        e.__traceback__ = None  # raised again from the script's place
        return e
    except Exception:
        return None


def _toolwarden_exec(argv, pairs):
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays
    # ignored across execve: the program gets them as env would leave them.
    import errno
    import signal

    for s in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(s, signal.SIG_DFL)
    env = {b"HOME": os.environb.get(b"HOME", b"")}
    env.update(pairs)
    try:
        try:
            os.execve(argv[0], argv, env)
        except OSError as e:
            if e.errno != errno.ENOEXEC:  # execvp runs that with /bin/sh
                raise
            os.execve(b"/bin/sh", [b"/bin/sh"] + argv, env)
    except OSError as e:
        os.write(2, b"/usr/bin/env: '" + argv[0] + b"': " + os.fsencode(e.strerror) + b"\n")
        os._exit(127 if isinstance(e, FileNotFoundError) else 126)


def _toolwarden_run(argv, code, prog, codes):
    # This function's globals are its own (see below), not the script's,
    # whose names could hide the builtins it uses.
    import builtins
    import sys

    path = argv[prog]
    sys.argv = argv[prog:]
    sys.orig_argv = argv
    # python3 looks up an importer for the script's path before running it.
    if path not in sys.path_importer_cache:
        importer = None
        for hook in sys.path_hooks:
            try:
                importer = hook(path)
                break
            except ImportError:
                pass
        sys.path_importer_cache[path] = importer
    loader = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", path)
    main = sys.modules["__main__"].__dict__
    main.clear()
    main.update(
        __name__="__main__", __doc__=None, __package__=None, __loader__=loader, __spec__=None,
        __annotations__={}, __builtins__=builtins, __file__=path, __cached__=None,
    )
    del builtins, loader

    def flush():
        # As Python does after a script, whatever its end: stderr, then
        # stdout, errors ignored.
        for f in (sys.stderr, sys.stdout):
            try:
                f.flush()
            except Exception:
                pass

    def ours(tb):
        # An exception's traceback from the script's frame down: the
        # stand-by's own frames are left out.
        while tb is not None and tb.tb_frame.f_code in codes:
            tb = tb.tb_next
        return tb

    exc = None
    try:
        if isinstance(code, SyntaxError):
            raise code
        exec(code, main)
    except SystemExit:
        flush()
        raise
    except BaseException as e:
        exc = e
    flush()
    if exc is None:
        return
    # What PyErr_Print does with an uncaught exception, out of any except
    # block (so that nothing raised here has exc as its context).
    tb = exc.__traceback__ = ours(exc.__traceback__)
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    if hasattr(sys, "excepthook"):
        try:
            sys.excepthook(type(exc), exc, tb)
        except SystemExit:
            raise
        except BaseException as e:
            err = e
        else:
            err = None
        if err is not None:
            err.__traceback__ = ours(err.__traceback__)
            if err.__context__ is exc:
                err.__context__ = None
            sys.stderr.write("Error in sys.excepthook:\n")
            sys.__excepthook__(type(err), err, err.__traceback__)
            sys.stderr.write("\nOriginal exception was:\n")
            sys.__excepthook__(type(exc), exc, tb)
    else:
        sys.stderr.write("sys.excepthook is missing\n")
        sys.__excepthook__(type(exc), exc, tb)
    raise SystemExit(130 if isinstance(exc, KeyboardInterrupt) else 1)


_toolwarden_main = sys._getframe().f_code
# The run keeps globals of its own: the script's namespace is __main__'s.
_toolwarden_run = type(_toolwarden_run)(_toolwarden_run.__code__, {"__builtins__": __builtins__}, "_toolwarden_run")
_toolwarden_run(*_toolwarden_standby(), len(sys.argv) - 1, {_toolwarden_run.__code__, _toolwarden_main})
