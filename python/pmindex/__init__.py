"""pmindex: durable in-memory (persistent-memory) indexes from Python.

    import pmindex
    with pmindex.open("/dev/shm/demo.pool", index="permart", size="1G") as db:
        db[42] = 7
        print(db[42], len(db), list(db.scan(0, 10)))
    with pmindex.open("/dev/shm/demo.pool") as db:   # the index comes from the pool
        print(db.report)                               # how the open went

An Index is a mapping of keys to values in key order. An index created with
keys="u64" (the default where the index offers it) takes int keys and values
(0 .. 2**64-1); one created with keys="bytes" takes bytes (an int key is its
8 big-endian bytes). Errors are subclasses of pmindex.Error whose `code` is
the exit code of the `pmindex` command line. Batch calls (get_many,
put_many, scan_list, scan_arrays) do many records in one call with the GIL
released. See docs/python.md.
"""

from collections.abc import MutableMapping as _MutableMapping

from ._core import (
    BadVersion,
    CheckFailed,
    CorruptPool,
    Error,
    Index,
    IndexClosed,
    Iterator,
    KeyTooLong,
    NotAPool,
    PoolFull,
    PoolIOError,
    PoolNotFound,
    PoolTooSmall,
    Unsupported,
    UsageError,
    ValueTooLong,
    WrongIndex,
    WrongMode,
    indexes,
)
from ._core import _open

__all__ = [
    "open", "indexes", "parse_size", "Index", "Iterator", "Error", "CheckFailed", "UsageError",
    "PoolNotFound", "NotAPool", "BadVersion", "WrongIndex", "PoolTooSmall", "PoolFull", "KeyTooLong",
    "PoolIOError", "CorruptPool", "Unsupported", "ValueTooLong", "WrongMode", "IndexClosed",
]
__version__ = "0.1.0"

# The whole MutableMapping protocol (db[k], del db[k], k in db, len, iter,
# get, keys, items, values, and the mixins update, pop, setdefault, popitem,
# clear, which a registered class does not inherit) is implemented by Index
# itself, in C++; tests/test_mapping.py checks it against a dict.
_MutableMapping.register(Index)

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(size):
    """Bytes from an int or a string such as "512M", "1G" (binary units) or "2^30"."""
    if isinstance(size, int) and not isinstance(size, bool):
        if size <= 0:
            raise UsageError(f"size must be positive, not {size}")
        return size
    if not isinstance(size, str):
        raise TypeError(f"size is an int or a string like '1G', not {type(size).__name__}")
    text = size.strip().upper()
    if text.endswith("B"):
        text = text[:-1]
    try:
        if "^" in text:
            base, exp = text.split("^", 1)
            value = int(base) ** int(exp)
        else:
            unit = text[-1:] if text[-1:] in _UNITS else ""
            value = int(text[: len(text) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise UsageError(f"bad size '{size}' (e.g. 1G, 512M, 2^30)") from None
    if value <= 0:
        raise UsageError(f"size must be positive, not '{size}'")
    return value


def open(path, index=None, *, mode=None, size="1G", create=True, exclusive=False, keys=None,
         params=None, flush="auto", quiet=False):
    """Opens (creating or recovering) a pmindex pool and returns its Index.

    path      the pool file (e.g. on /dev/shm or a DAX file system).
    index     the index to create (pmindex.indexes()); None opens an existing
              pool with the index named in its header.
    mode      "persist", "dram", "volatile", "eadr" or "tx". None: an
              existing pool opens in the mode it was created in (stored in
              it), a new one in "persist" ("dram" for an index without it).
              persist, eadr and volatile pools may be opened in one another's
              mode (db.report["note"] says so); tx pools only in tx mode
              (WrongMode); a pool left dirty by a volatile open is refused
              (CorruptPool).
    size      pool size at creation: bytes, or "512M", "1G", ...
    create    True: create the pool if missing; False: it must exist.
    exclusive with create: the pool must not exist yet.
    keys      "u64" or "bytes": the key kind at creation (a shorthand for the
              parameter keys=).
    params    more index parameters, "name=value,..." or a dict.
    flush     "auto", "clwb", "clflushopt" or "clflush".
    quiet     no warnings on stderr (e.g. a pool outside tmpfs or DAX).

    Raises a pmindex.Error subclass (PoolNotFound, NotAPool, WrongIndex,
    WrongMode, PoolIOError, CorruptPool, UsageError, Unsupported, ...). Use it as a
    context manager, or call close(): a pool left open recovers at its next
    open (an unclean shutdown).
    """
    if isinstance(params, dict):
        params = ",".join(f"{k}={v}" for k, v in params.items())
    params = params or ""
    if keys is not None:
        if keys not in ("u64", "bytes"):
            raise UsageError(f"keys must be 'u64' or 'bytes', not {keys!r}")
        params = f"keys={keys}" + ("," + params if params else "")
    if not create and exclusive:
        raise UsageError("exclusive=True needs create=True")
    how = "new" if exclusive else "create" if create else "existing"
    if index is None:
        if exclusive:
            raise UsageError("creating a pool (exclusive=True) needs index=")
        how = "existing"  # the index comes from the pool's header
    return _open(str(path), index or "", mode or "", parse_size(size), how, params, flush, quiet)
