from typing import Dict, Optional, Union

from ._core import (
    BadVersion as BadVersion,
    CheckFailed as CheckFailed,
    CorruptPool as CorruptPool,
    Error as Error,
    Index as Index,
    IndexClosed as IndexClosed,
    IndexInfo as IndexInfo,
    Iterator as Iterator,
    KeyTooLong as KeyTooLong,
    NotAPool as NotAPool,
    OpenReport as OpenReport,
    PoolFull as PoolFull,
    PoolIOError as PoolIOError,
    PoolNotFound as PoolNotFound,
    PoolTooSmall as PoolTooSmall,
    Stats as Stats,
    Unsupported as Unsupported,
    UsageError as UsageError,
    ValueTooLong as ValueTooLong,
    WrongIndex as WrongIndex,
    WrongMode as WrongMode,
    indexes as indexes,
)

__version__: str

def parse_size(size: Union[int, str]) -> int:
    """Bytes from an int or a string such as "512M", "1G" or "2^30"."""

def open(path: str, index: Optional[str] = None, *, mode: Optional[str] = None,
         size: Union[int, str] = "1G", create: bool = True, exclusive: bool = False,
         keys: Optional[str] = None, params: Union[str, Dict[str, object], None] = None,
         flush: str = "auto", quiet: bool = False) -> Index:
    """Opens (creating or recovering) a pool; see the module's docs."""
