# Shared fixtures of the pmindex Python tests. Pools go to /dev/shm (or
# $PMINDEX_TEST_DIR) and are removed afterwards; sizes stay small so the
# suite runs in seconds, also under ASan.
import os
import uuid

import pytest

POOL_DIR = os.environ.get("PMINDEX_TEST_DIR", "/dev/shm")


@pytest.fixture
def pool_path():
    path = os.path.join(POOL_DIR, f"pmindex-pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}.pool")
    yield path
    for p in (path, path + ".bench"):
        if os.path.exists(p):
            os.remove(p)


def persistent_indexes():
    import pmindex
    return [i["name"] for i in pmindex.indexes() if "persist" in i["modes"]]


def all_indexes():
    import pmindex
    return [i["name"] for i in pmindex.indexes()]


def mode_of(name):
    import pmindex
    info = next(i for i in pmindex.indexes() if i["name"] == name)
    return "persist" if "persist" in info["modes"] else "dram"


def small_params(name):
    """An index with a key limit (a fixed array: arraylist) takes a small
    capacity in these small pools; its keys are then below key_limit(name)."""
    import pmindex
    info = next(i for i in pmindex.indexes() if i["name"] == name)
    return {"capacity": 4096} if info.get("key_limit") else {}


def key_limit(name):
    return 4096 if small_params(name) else 0
