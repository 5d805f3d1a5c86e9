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
    src = None
    # In place only with this process's environment: the same entries,
    # each once (runsc may pass them in another order than the run's).
    same_env = len(dict(pairs)) == len(pairs) and dict(pairs) == dict(os.environb)
    if argv[: len(prog)] == prog and len(argv) > len(prog) and argv[len(prog)].startswith(b"/") and same_env:
        try:
            with open(argv[len(prog)], "rb") as f:
                src = f.read()
        except OSError:
            pass
        if src is not None and b"\0" in src:
            src = None  # compile() words that error otherwise than python3
    if src is None:
        env = {b"HOME": os.environb.get(b"HOME", b"")}
        env.update(pairs)
        try:
            os.execve(argv[0], argv, env)
        except OSError as e:
            os.write(2, b"toolwarden-warm: " + argv[0] + b": " + os.fsencode(e.strerror) + b"\n")
            os._exit(127 if isinstance(e, FileNotFoundError) else 126)
    return [os.fsdecode(a) for a in argv], src


def _toolwarden_run(argv, src, prog, codes):
    # The module's names go with its namespace: this function keeps its own.
    import builtins
    import sys

    path = argv[prog]
    sys.argv = argv[prog:]
    sys.orig_argv = argv
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

    try:
        exec(compile(src, path, "exec", dont_inherit=True), main)
    except SystemExit:
        flush()
        raise
    except BaseException as e:
        flush()
        # Python prints an uncaught exception from the script's frame down:
        # the stand-by's own frames are left out.
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code in codes:
            tb = tb.tb_next
        e.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        sys.excepthook(type(e), e, tb)
        raise SystemExit(130 if isinstance(e, KeyboardInterrupt) else 1) from None
    flush()


_toolwarden_run(*_toolwarden_standby(), len(sys.argv) - 1, {_toolwarden_run.__code__, sys._getframe().f_code})
