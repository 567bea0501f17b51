"""Type stubs of pmindex._core (the compiled part of the pmindex package)."""

from typing import (Any, Dict, Iterable, List, Mapping, Optional, Tuple, TypedDict, TypeVar, Union,
                    overload)

# keys=u64 indexes: int (or an object with __index__, or 8 bytes); keys=bytes
# indexes: bytes, str (its UTF-8 bytes) or int.
Key = Union[int, bytes, str]
Value = Union[int, bytes, str]
_T = TypeVar("_T")
_Items = Union[Mapping[Any, Any], Iterable[Tuple[Any, Any]]]

class Error(Exception):
    """Base of every pmindex error; `code` is the `pmindex` command line's exit code."""
    code: int

class CheckFailed(Error): ...  # 1: check() found a violated invariant
class UsageError(Error, ValueError): ...  # 2: unknown index, mode or parameter
class PoolNotFound(Error, FileNotFoundError): ...  # 3
class NotAPool(Error): ...  # 4
class BadVersion(Error): ...  # 5
class WrongIndex(Error): ...  # 6
class PoolTooSmall(Error): ...  # 7
class PoolFull(Error): ...  # 8: the write failed; nothing stored was lost
class KeyTooLong(Error, ValueError): ...  # 9
class PoolIOError(Error, OSError): ...  # 10: open/mmap failed, pool exists, or in use
class CorruptPool(Error): ...  # 11
class Unsupported(Error, ValueError): ...  # 12: mode, key kind or size not supported
class ValueTooLong(Error, ValueError): ...  # 13
class WrongMode(Error): ...  # 14: a tx pool opened in another mode, or the reverse
class IndexClosed(Error, ValueError): ...  # a call after close() (code 2)

class OpenReport(TypedDict):
    created: bool
    was_clean: bool
    open_seconds: float
    recover_seconds: float
    traced_blocks: int
    mode: str       # this open's persistence mode
    pool_mode: str  # the pool's own (chosen at creation; used when open() names none)
    note: str       # one line when they differ, else ""

class Stats(TypedDict):
    records: int
    pm_bytes_used: int
    pm_bytes_reserved: int
    dram_bytes: int        # the index's and its pool allocator's
    alloc_dram_bytes: int  # of dram_bytes, the pool allocator's (sized by the pool)
    extra: Dict[str, float]

class ParamInfo(TypedDict, total=False):
    name: str
    help: str
    default: str
    choices: List[str]
    min: int
    max: int

class IndexInfo(TypedDict):
    name: str
    family: str
    description: str
    paper: str
    concurrent: bool
    modes: List[str]
    key_kinds: List[str]
    max_key: int
    max_value: int
    key_limit: int  # keys below it with the default params (arraylist: capacity); 0: any
    scan_guarantee: str
    params: List[ParamInfo]

class Iterator:
    """An iterator over records (or keys, or values) in key order."""
    def __iter__(self) -> "Iterator": ...
    def __next__(self) -> Any: ...

class Index:
    """An open index: a mapping of int or bytes keys to values, in key order.

    keys=u64 indexes take and return ints; keys=bytes indexes take bytes (or
    ints: 8 big-endian key bytes, 8 host-order value bytes) and return bytes.
    A context manager: the with block closes it cleanly.
    """
    def insert(self, key: Key, value: Value) -> bool:
        """Adds the record; False (and no change) if the key is present."""
    def update_existing(self, key: Key, value: Value) -> bool:
        """Replaces the value of a present key; False (and no change) if the key is absent."""
    @overload
    def update(self, items: _Items = ..., /, **kw: Value) -> None:
        """dict.update: upserts every (key, value) of a mapping or pairs, then the keywords."""
    @overload
    def update(self, key: Key, value: Value, /) -> bool:
        """Deprecated (DeprecationWarning): update_existing(key, value)."""
    def upsert(self, key: Key, value: Value) -> bool:
        """Inserts or replaces; True if the key was new."""
    def remove(self, key: Key) -> bool:
        """Removes the record; False if the key is absent."""
    def get(self, key: Key, default: Optional[_T] = None) -> Union[Value, _T, None]:
        """The value of `key`, or `default` when absent."""
    def get_many(self, keys: Iterable[Key], default: _T = ...) -> List[Union[Value, _T, None]]:
        """The value of each key, `default` (None) for an absent one: one call, GIL released."""
    def put_many(self, items: _Items) -> int:
        """Upserts every (key, value) in order (a later duplicate wins); how many keys were new."""
    @overload
    def pop(self, key: Key) -> Value: ...
    @overload
    def pop(self, key: Key, default: _T) -> Union[Value, _T]:
        """Removes the key and returns its value; `default` (or KeyError) when absent."""
    def setdefault(self, key: Key, default: Optional[Value] = None) -> Value:
        """The value of `key`; when absent stores `default` and returns it."""
    def popitem(self) -> Tuple[Value, Value]:
        """Removes and returns the pair of the smallest key; KeyError when empty."""
    def clear(self) -> None:
        """Removes every record (in key order, in batches, GIL released)."""
    def __getitem__(self, key: Key) -> Value: ...
    def __setitem__(self, key: Key, value: Value) -> None: ...
    def __delitem__(self, key: Key) -> None: ...
    def __contains__(self, key: object) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator: ...
    def scan(self, start: Optional[Key], count: int) -> Iterator:
        """Up to `count` (key, value) pairs with key >= start (None: the first key), in key order."""
    def scan_list(self, start: Optional[Key], count: int) -> List[Tuple[Value, Value]]:
        """scan(start, count) as a list, built in one call."""
    def scan_arrays(self, start: Optional[Key], count: int) -> Tuple[Any, Any]:
        """scan(start, count) of a keys=u64 index as two numpy uint64 arrays (keys, values)."""
    def range(self, lo: Key, hi: Key) -> Iterator:
        """Every (key, value) pair with lo <= key <= hi (one range() call of the index)."""
    def range_list(self, lo: Key, hi: Key) -> List[Tuple[Value, Value]]:
        """range(lo, hi) as a list, built in one call."""
    def items(self, start: Optional[Key] = None) -> Iterator:
        """Every (key, value) pair from `start` on (None: the first key), read in batches."""
    def keys(self, start: Optional[Key] = None) -> Iterator:
        """Every key from `start` on, in order."""
    def values(self, start: Optional[Key] = None) -> Iterator:
        """Every value from `start` on, in key order."""
    def stats(self) -> Stats:
        """Records, PM bytes used and reserved, DRAM bytes, and the index's own figures."""
    def check(self) -> bool:
        """True if the structural invariants hold; raises CheckFailed otherwise."""
    @property
    def report(self) -> OpenReport:
        """How the open went (created, clean or recovered, times)."""
    def close(self) -> None:
        """Clean shutdown (idempotent); later calls raise IndexClosed."""
    def abandon(self) -> None:
        """Drops the index without a clean shutdown, as a crash would (tests)."""
    def __enter__(self) -> "Index": ...
    def __exit__(self, *exc: object) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def key_kind(self) -> str:
        """'u64' or 'bytes'."""
    @property
    def max_key(self) -> int: ...
    @property
    def max_value(self) -> int: ...
    @property
    def concurrent(self) -> bool:
        """True if several threads may call it at once (others are serialised)."""
    @property
    def scan_guarantee(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...

def indexes() -> List[IndexInfo]:
    """The registered indexes."""

def _open(path: str, index: str, mode: str, size: int, open: str, params: str, flush: str,
          quiet: bool) -> Index: ...
