#!/usr/bin/env bash
# The installed library works for a program outside this tree:
# `cmake --install` of this build into a fresh prefix; every installed
# header compiles on its own with only the prefix on the include path;
# examples/embed builds against the prefix with find_package(pmindex) (the
# shared and the static library) and with pkg-config (libpmindex.so), and
# each program sees every index, inserts, scans, and finds a crashed
# child's records after recovery.
# usage: install_example.sh BUILD_DIR SOURCE_DIR CMAKE CXX GENERATOR MAKE_PROGRAM [CXXFLAGS]
set -eu
build=$1 src=$2 cmake=$3 cxx=$4 generator=$5 make_program=$6 cxxflags=${7:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmindex-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
for f in lib/libpmindex.a lib/cmake/pmindex/pmindexConfig.cmake lib/cmake/pmindex/pmindexConfigVersion.cmake \
         lib/cmake/pmindex/pmindexTargets.cmake lib/pkgconfig/pmindex.pc bin/pmindex include/pmindex/index.hpp; do
  [ -f "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
soname=$(ls "$prefix"/lib/libpmindex.so.* | head -1)
[ -n "$soname" ] && [ -L "$prefix/lib/libpmindex.so" ] || { echo "libpmindex.so is not installed with its version"; exit 1; }
"$prefix/bin/pmindex" list >/dev/null

# Every installed header on its own: a header one of them includes must be
# installed too (nothing from the source tree is on the include path).
for h in $(cd "$prefix/include" && find pmindex -name '*.hpp' | sort); do
  echo "#include <$h>" >"$tmp/one.cpp"
  "$cxx" -std=c++20 $cxxflags -fsyntax-only -I"$prefix/include" "$tmp/one.cpp" || { echo "not self-contained: $h"; exit 1; }
done

# Every index the library has (the command line's harness-only `null` aside):
# a program linking either library must see them all.
indexes=$("$prefix/bin/pmindex" list --json |
          python3 -c 'import json,sys; print(sum(e["name"] != "null" for e in json.load(sys.stdin)["indexes"]))')

check_output() {  # $1: the program's output
  echo "$1"
  echo "$1" | grep -q "^indexes in the library: $indexes\$" || { echo "not every index is linked in ($indexes)"; exit 1; }
  echo "$1" | grep -q '^scan from 40: 40=400 41=410 42=420 43=430 44=440$' || { echo "wrong scan"; exit 1; }
  echo "$1" | grep -q 'recovered=yes, records 200, keys 1001..1100 found 100, check ok' ||
    { echo "records lost after the crash"; exit 1; }
}

# find_package(pmindex CONFIG) -> pmindex::pmindex.
"$cmake" -S "$src/examples/embed" -B "$tmp/build" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make_program" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$cmake" --build "$tmp/build" >/dev/null
check_output "$("$tmp/build/pmindex_embed" "$tmp")"
ldd "$tmp/build/pmindex_embed" | grep -q "libpmindex.so.* => $prefix" || { echo "not linked with the installed libpmindex.so"; exit 1; }

# The same with pmindex::pmindex_static (libpmindex.a: no whole-archive
# linking, every index is named by the registry's list).
"$cmake" -S "$src/examples/embed" -B "$tmp/build_static" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make_program" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_PREFIX_PATH="$prefix" -DPMINDEX_EMBED_STATIC=ON >/dev/null
"$cmake" --build "$tmp/build_static" >/dev/null
if ldd "$tmp/build_static/pmindex_embed" | grep -q libpmindex; then echo "the static build links libpmindex.so"; exit 1; fi
check_output "$("$tmp/build_static/pmindex_embed" "$tmp")"

# pkg-config, against the shared library.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
libdir=$(pkg-config --variable=libdir pmindex)
"$cxx" -std=c++20 $cxxflags "$src/examples/embed/main.cpp" -o "$tmp/embed_pc" $(pkg-config --cflags --libs pmindex) \
  -Wl,-rpath,"$libdir"
ldd "$tmp/embed_pc" | grep -q "libpmindex.so.* => $prefix" || { echo "not linked with the installed libpmindex.so"; exit 1; }
check_output "$("$tmp/embed_pc" "$tmp")"
echo "installed library: find_package (shared, static) and pkg-config builds work"
