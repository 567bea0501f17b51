"""The memcached meta protocol (mg, ms, md, ma, mn, me): through meta-memcache,
a client not written here, and the exact replies over a raw socket."""
import base64

from meta_memcache import CacheClient, Key, ServerAddress, connection_pool_factory_builder
from meta_memcache.protocol import (SET_MODE_ADD, SET_MODE_APPEND, SET_MODE_PREPEND, SET_MODE_REPLACE, Conflict,
                                     Miss, NotStored, RequestFlags, Success, Value)

from conftest import recv_until


def client(server):
    return CacheClient.cache_client_from_servers(
        servers=[ServerAddress(host="127.0.0.1", port=server.port)],
        connection_pool_factory_fn=connection_pool_factory_builder(recv_timeout=10))


def ask(sock, payload):
    """Sends payload and an mn; returns every reply before the MN."""
    sock.sendall(payload + b"mn\r\n")
    return recv_until(sock, b"MN\r\n")[:-4]


def test_meta_memcache_high_level(server):
    c = client(server)
    assert c.set(Key("alpha"), "one", ttl=0)
    assert c.get(Key("alpha")) == "one"
    assert c.get(Key("absent")) is None
    # (cas ids are (boot << 40) | sequence: meta-memcache does not parse ids
    # over 32 bits, so cas is checked over the raw socket below)
    assert c.set(Key("alpha"), "two", ttl=0)
    assert c.get(Key("alpha")) == "two"
    assert c.set(Key("obj"), {"a": [1, 2]}, ttl=0)
    assert c.get(Key("obj")) == {"a": [1, 2]}
    assert c.touch(Key("alpha"), ttl=3600)
    assert c.delete(Key("alpha"))
    assert c.get(Key("alpha")) is None
    assert c.delta_initialize_and_get(Key("counter"), delta=5, initial_value=10, initial_ttl=0) == 10
    assert c.delta_and_get(Key("counter"), delta=5) == 15
    assert c.delta(Key("counter"), delta=2)
    assert c.delta_and_get(Key("counter"), delta=-20) == 0  # decr stops at 0
    many = {Key(f"m{i}"): f"v{i}" for i in range(20)}
    for k, v in many.items():
        assert c.set(k, v, ttl=0)
    got = c.multi_get(list(many) + [Key("nope")])
    assert {k.key: v for k, v in got.items() if v is not None} == {k.key: v for k, v in many.items()}


def test_meta_memcache_low_level(server):
    c = client(server)
    r = c.meta_set(Key("k1"), b"hello", flags=RequestFlags(cache_ttl=100))
    assert isinstance(r, Success)
    r = c.meta_get(Key("k1"), flags=RequestFlags(return_value=True, return_ttl=True, return_size=True,
                                                 return_client_flag=True))
    assert isinstance(r, Value) and 0 < r.flags.ttl <= 100 and r.size == 5
    assert isinstance(c.meta_get(Key("k2"), flags=RequestFlags(return_value=True)), Miss)
    assert isinstance(c.meta_set(Key("k1"), b"x", flags=RequestFlags(mode=SET_MODE_ADD)), NotStored)
    assert isinstance(c.meta_set(Key("k3"), b"x", flags=RequestFlags(mode=SET_MODE_REPLACE)), NotStored)
    assert isinstance(c.meta_set(Key("k1"), b"!", flags=RequestFlags(mode=SET_MODE_APPEND)), Success)
    assert isinstance(c.meta_set(Key("k1"), b"<", flags=RequestFlags(mode=SET_MODE_PREPEND)), Success)
    assert c.get(Key("k1")) == b"<hello!"
    assert isinstance(c.meta_set(Key("k1"), b"z", flags=RequestFlags(cas_token=12345)), Conflict)
    assert isinstance(c.meta_delete(Key("k1"), flags=RequestFlags(cas_token=12345)), Conflict)
    assert isinstance(c.meta_delete(Key("k1")), Success)
    assert isinstance(c.meta_delete(Key("k1")), Miss)


def test_meta_exact_replies(server):
    s = server.connect()
    assert ask(s, b"ms foo 2 T0 F5 c k\r\nhi\r\n").startswith(b"HD c")
    r = ask(s, b"mg foo s v f t k O123 q\r\n")
    assert r == b"VA 2 s2 f5 t-1 kfoo O123\r\nhi\r\n", r
    assert ask(s, b"mg foo\r\n") == b"HD\r\n"
    assert ask(s, b"mg foo h l\r\n") == b"HD h0 l0\r\n"
    assert ask(s, b"mg missing v q\r\nmg missing v\r\n") == b"EN\r\n"  # q hides the miss
    assert ask(s, b"ms foo 2 q\r\nhi\r\n") == b""  # q hides HD
    assert ask(s, b"ms newk 2 MR q\r\nhi\r\n") == b"NS\r\n"  # but not NS
    assert ask(s, b"ms foo 2 MA\r\nyo\r\nmg foo v\r\n") == b"HD\r\nVA 4\r\nhiyo\r\n"
    assert ask(s, b"md foo q\r\nmd foo\r\n") == b"NF\r\n"
    assert ask(s, b"ma cnt\r\n") == b"NF\r\n"
    assert ask(s, b"ma cnt N0 J10 v\r\n") == b"VA 2\r\n10\r\n"
    assert ask(s, b"ma cnt v D5 MD t\r\n") == b"VA 1 t-1\r\n5\r\n"
    assert ask(s, b"ma cnt MI D1 q\r\nmg cnt v\r\n") == b"VA 1\r\n6\r\n"
    assert ask(s, b"ma cnt M+ D4 T100 v t\r\n") in (b"VA 2 t100\r\n10\r\n", b"VA 2 t99\r\n10\r\n")
    assert ask(s, b"ms nn 2\r\nab\r\nma nn\r\n") == b"HD\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
    assert ask(s, b"me cnt\r\n").startswith(b"ME cnt exp=")
    assert ask(s, b"me nokey\r\n") == b"EN\r\n"
    assert ask(s, b"mn\r\n") == b"MN\r\n"
    cas = ask(s, b"ms c 1 c\r\nx\r\n").split(b" c")[1].strip()
    assert ask(s, b"ms c 1 C" + cas + b" c\r\ny\r\n").startswith(b"HD c")
    assert ask(s, b"ms c 1 C" + cas + b"\r\nz\r\nmd c C" + cas + b"\r\n") == b"EX\r\nEX\r\n"
    assert ask(s, b"mg c v\r\n") == b"VA 1\r\ny\r\n"


def test_meta_touch_and_ttl(server):
    s = server.connect()
    assert ask(s, b"ms t 1 T100\r\nx\r\n") == b"HD\r\n"
    assert ask(s, b"mg t T0 t v\r\n") == b"VA 1 t-1\r\nx\r\n"  # T0: never expires now
    assert ask(s, b"ms gone 1 T-1\r\nx\r\nmg gone v\r\n") == b"HD\r\nEN\r\n"


def test_meta_base64_keys(server):
    s = server.connect()
    binary = bytes([0x01, 0x20, 0xff, 0x0d, 0x0a, 0x00, 0x7f])  # space, CR LF, NUL inside: only under b
    tok = base64.b64encode(binary)
    assert ask(s, b"ms " + tok + b" 3 b k F9\r\nabc\r\n") == b"HD k" + tok + b" b\r\n"
    assert ask(s, b"mg " + tok + b" b v k f\r\n") == b"VA 3 k" + tok + b" b f9\r\nabc\r\n"
    assert ask(s, b"me " + tok + b" b\r\n").startswith(b"ME " + tok + b" exp=-1")
    assert ask(s, b"ma " + tok + b" b\r\n") == b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
    assert ask(s, b"md " + tok + b" b q\r\nmg " + tok + b" b v\r\n") == b"EN\r\n"
    assert ask(s, b"mg foo b v\r\n") == b"CLIENT_ERROR error decoding key\r\n"
    assert ask(s, b"mg AA== b v\r\n") == b"CLIENT_ERROR error decoding key\r\n"  # a leading NUL is the server's
    assert ask(s, b"ms foo! 2 b\r\nhi\r\n") == b"CLIENT_ERROR error decoding key\r\n"  # block skipped


def test_meta_flag_errors(server):
    s = server.connect()
    assert ask(s, b"mg foo Z\r\n") == b"CLIENT_ERROR invalid flag\r\n"
    assert ask(s, b"mg foo v v\r\n") == b"CLIENT_ERROR duplicate flag\r\n"
    assert ask(s, b"mg foo Tx\r\n") == b"CLIENT_ERROR bad token in command line format\r\n"
    assert ask(s, b"mg foo O" + b"x" * 33 + b"\r\n") == b"CLIENT_ERROR opaque token too long\r\n"
    assert ask(s, b"mg\r\n") == b"ERROR\r\n"
    assert ask(s, b"mg " + b"a" * 251 + b" v\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    # unimplemented flags are refused, not ignored: N R E (mg), I E N (ms), I x (md)
    for line in (b"mg foo N30\r\n", b"mg foo R30\r\n", b"mg foo E5\r\n"):
        assert ask(s, line) == b"CLIENT_ERROR invalid flag\r\n", line
    for line in (b"ms foo 2 I\r\nhi\r\n", b"ms foo 2 E5\r\nhi\r\n", b"ms foo 2 Z\r\nhi\r\n"):
        assert ask(s, line) == b"CLIENT_ERROR invalid flag\r\n", line  # and the data block skipped
    assert ask(s, b"ms foo 2 T1 T2\r\nhi\r\n") == b"CLIENT_ERROR duplicate flag\r\n"
    assert ask(s, b"ms foo 2 MX\r\nhi\r\n") == b"CLIENT_ERROR invalid mode for ms M token\r\n"
    assert ask(s, b"ms foo 2 Fabc\r\nhi\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert ask(s, b"ms foo 2 F4294967296\r\nhi\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert ask(s, b"ms foo x\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert ask(s, b"ms foo 2 T1\r\nhiX\r\n") == b"CLIENT_ERROR bad data chunk\r\n"
    assert ask(s, b"ms foo 2000000\r\n" + b"x" * 2000000 + b"\r\n") == b"SERVER_ERROR object too large for cache\r\n"
    assert ask(s, b"md foo x\r\n") == b"CLIENT_ERROR invalid or duplicate flag\r\n"
    assert ask(s, b"md foo Cx\r\n") == b"CLIENT_ERROR invalid or duplicate flag\r\n"
    assert ask(s, b"ma foo MX\r\n") == b"CLIENT_ERROR invalid mode for ma M token\r\n"
    assert ask(s, b"ma foo D18446744073709551616\r\n") == b"CLIENT_ERROR invalid or duplicate flag\r\n"
    assert ask(s, b"me\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    # after all that the connection still works
    assert ask(s, b"ms ok 1\r\n1\r\nmg ok v\r\n") == b"HD\r\nVA 1\r\n1\r\n"
