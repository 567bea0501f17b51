"""libmemcached-tools (Debian), clients not written here: memccp / memccat /
memcflush / memcstat / memcdump, and memccapable's ASCII conformance tests."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import recv_until

TOOLS = {t: shutil.which(t) for t in ("memccp", "memccat", "memcflush", "memcstat", "memccapable", "memcdump")}
need = pytest.mark.skipif(not all(TOOLS.values()), reason="libmemcached-tools not installed")

# memccapable tests that do not apply to pmindex serve, and why. Every other
# ASCII test must pass.
NOT_APPLICABLE = {
}


def tool(name, *args, **kw):
    return subprocess.run([TOOLS[name], *args], capture_output=True, text=True, timeout=120, **kw)


@need
def test_memccp_memccat_memcflush(server, tmp_path):
    servers = f"--servers=127.0.0.1:{server.port}"
    files = []
    for i, content in enumerate([b"hello", bytes(range(256)) * 100, b""]):
        p = tmp_path / f"file{i}.bin"
        p.write_bytes(content)
        files.append((p, content))
    r = tool("memccp", servers, "--flags=77", *[str(p) for p, _ in files])
    assert r.returncode == 0, r.stderr
    for p, content in files:
        out = subprocess.run([TOOLS["memccat"], servers, p.name], capture_output=True, timeout=60)
        assert out.returncode == 0 and out.stdout == content + b"\n", out.stderr  # memccat ends with a newline
    r = tool("memccat", servers, "--flag", "file0.bin")
    assert "77" in r.stdout + r.stderr
    st = tool("memcstat", servers)
    assert st.returncode == 0 and re.search(r"curr_items:\s*3", st.stdout), st.stdout
    assert tool("memcflush", servers).returncode == 0
    assert tool("memccat", servers, "file0.bin").returncode != 0  # gone


@need
def test_memccapable_ascii(server):
    r = tool("memccapable", "-h", "127.0.0.1", "-p", str(server.port), "-a", "-t", "10")
    print(r.stdout, r.stderr)
    results = dict(re.findall(r"^ascii (.+?)\s+\[(\w+)\]", r.stdout, re.M))
    assert results, r.stdout + r.stderr
    failed = {t for t, v in results.items() if v.lower() != "pass" and t not in NOT_APPLICABLE}
    assert not failed, f"memccapable failures: {sorted(failed)}\n{r.stdout}"
    assert len(results) >= 27 and r.returncode == 0, r.stdout


@need
def test_memcdump_lists_every_key(server):
    s = server.connect()
    keys = [f"key:{i:04d}" for i in range(1500)]
    s.sendall(b"".join(b"set %s 0 0 1\r\nx\r\n" % k.encode() for k in keys) + b"set gone 0 -1 1\r\nx\r\n")
    assert recv_until(s, b"STORED\r\n" * (len(keys) + 1))
    r = tool("memcdump", f"--servers=127.0.0.1:{server.port}")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == keys  # in key order, expired items left out


@need
def test_lru_crawler_metadump(server):
    s = server.connect()
    s.sendall(b"set a%20b 5 0 2\r\nhi\r\nset zz 0 100 1\r\nx\r\n")
    assert recv_until(s, b"STORED\r\nSTORED\r\n")
    for arg in (b"all", b"hash", b"1", b"1,2"):
        s.sendall(b"lru_crawler metadump " + arg + b"\r\n")
        lines = recv_until(s, b"END\r\n").decode().splitlines()
        assert lines[-1] == "END" and len(lines) == 3, lines
        assert lines[0].startswith("key=a%2520b exp=-1 ") and " flags=5" in lines[0], lines
        assert lines[1].startswith("key=zz exp=") and not lines[1].startswith("key=zz exp=-1"), lines
    s.sendall(b"lru_crawler metadump 2\r\n")
    assert recv_until(s, b"END\r\n") == b"END\r\n"
    s.sendall(b"lru_crawler metadump x\r\n")
    assert recv_until(s, b"\r\n").startswith(b"CLIENT_ERROR")

