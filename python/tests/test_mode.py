# The pool stores its persistence mode: pmindex.open(path) reopens in it,
# another mode is noted in db.report (persist, eadr, volatile) or refused
# (tx and the others: WrongMode), and a pool left dirty by a volatile open
# is refused as not crash-consistent (CorruptPool).
import struct

import pytest

import pmindex

M64 = (1 << 64) - 1


def _mix(h, w):
    h ^= (w * 0xFF51AFD7ED558CCD) & M64
    h = ((h << 31) | (h >> 33)) & M64
    return (h * 0xC4CEB9FE1A85EC53) & M64


def _checksum(b, seed=0):
    """pm::detail::checksum (include/pmindex/pm/detail/header.hpp)."""
    n = len(b)
    lane = [seed ^ 0x9E3779B97F4A7C15, (seed + n) & M64, ~seed & M64, seed ^ 0xC2B2AE3D27D4EB4F]
    i = 0
    while i + 32 <= n:
        for j in range(4):
            lane[j] = _mix(lane[j], int.from_bytes(b[i + 8 * j:i + 8 * j + 8], "little"))
        i += 32
    j = 0
    while i < n:
        lane[j] = _mix(lane[j], int.from_bytes(b[i:i + 8].ljust(8, b"\0"), "little"))
        j, i = j + 1, i + 8
    h = lane[0] ^ (lane[1] * 3 & M64) ^ (lane[2] * 5 & M64) ^ (lane[3] * 7 & M64)
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    return h ^ (h >> 33)


def _set_created_mode(path, mode_value):
    """Rewrites the pool's create_mode (offset 448) and its header checksum."""
    with open(path, "r+b") as f:
        h = bytearray(f.read(512))
        h[448:456] = struct.pack("<Q", mode_value)
        h[104:112] = struct.pack("<Q", _checksum(bytes(h[128:512]), _checksum(bytes(h[0:64]))))
        f.seek(0)
        f.write(h)


def test_reopen_uses_the_pools_mode(pool_path):
    with pmindex.open(pool_path, "permart", mode="eadr", size="32M") as db:
        db[1] = 2
        assert db.mode == "eadr" and db.report["pool_mode"] == "eadr"
    with pmindex.open(pool_path) as db:
        assert db.mode == "eadr"
        assert db.report["mode"] == "eadr" and db.report["note"] == ""
        assert db[1] == 2
    with pmindex.open(pool_path, mode="volatile") as db:
        assert db.mode == "volatile" and db.report["pool_mode"] == "eadr"
        assert db.report["note"] == "pool created in eadr mode, opened in volatile mode"
        db[3] = 4
    with pmindex.open(pool_path, "permart") as db:  # a clean volatile close keeps everything
        assert db.mode == "eadr" and db[3] == 4 and db.check()


def test_dirty_volatile_pool_is_refused(pool_path):
    db = pmindex.open(pool_path, "fptree", mode="volatile", size="32M")
    for k in range(100):
        db[k] = k
    db.abandon()
    for mode in (None, "persist", "volatile"):
        with pytest.raises(pmindex.CorruptPool, match="not crash-consistent"):
            pmindex.open(pool_path, mode=mode)


def test_tx_pool_opens_only_in_tx_mode(pool_path):
    # A real tx pool (its undo logs in the header: a persist pool relabelled
    # tx is refused as corrupt); an index without tx refusing one is
    # tests/unit/pool_mode_test.cpp's PoolMode.TxAndOtherModesNeverMix.
    with pmindex.open(pool_path, "btree", mode="tx", size="8M") as db:
        db[1] = 2
    assert pmindex.WrongMode.code == 14
    with pytest.raises(pmindex.WrongMode, match="created in tx mode"):
        pmindex.open(pool_path, mode="persist")
    with pmindex.open(pool_path) as db:  # untouched by the refusal, reopened in its own mode
        assert db.report["was_clean"] and db.mode == "tx" and db[1] == 2
