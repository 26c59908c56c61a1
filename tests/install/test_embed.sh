#!/bin/sh
# install.embed (tests/CMakeLists.txt): install a build into a temporary prefix,
# build examples/embed.c against it with nothing but what pkg-config says, once with
# the shared library (luacrawl.pc) and once with the static one (luacrawl-static.pc),
# and run each on fetch_page.lua, which fetches a page from the fixture server
# (LC_FIXTURE_URL, from tests/fixtures/run.py --http). Also loads the installed Lua
# module from plain luajit.
#   test_embed.sh BUILD_DIR SOURCE_DIR LIBDIR
set -eu
build=$1 src=$2 libdir=$3
: "${LC_FIXTURE_URL:?run me through tests/fixtures/run.py --http}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() {
    echo "install.embed: $*" >&2
    exit 1
}

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
    cat "$tmp/install.log" >&2
    fail "cmake --install failed"
}
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# Only the installed module and the engine's built-in library are within reach of
# require: not the system's Lua modules (lua-cjson among them).
export LUA_PATH="$tmp/none/?.lua" LUA_CPATH="$tmp/none/?.so"

# The prefix the .pc files name is the one installed to.
pc_libdir=$(pkg-config --variable=libdir luacrawl)
[ "$(realpath "$pc_libdir")" = "$(realpath "$prefix/$libdir")" ] ||
    fail "luacrawl.pc says libdir=$pc_libdir, installed in $prefix/$libdir"

cp "$src/tests/install/fetch_page.lua" "$tmp/fetch_page.lua"
cat >"$tmp/expected" <<END
arg[0] $tmp/fetch_page.lua
arg[1] $LC_FIXTURE_URL
arg[2] two words
... 2 values, the first $LC_FIXTURE_URL
status 200
title Site
crawl framework loaded
END

check_program() { # NAME: run $tmp/NAME and compare its output
    "$tmp/$1" "$tmp/fetch_page.lua" "$LC_FIXTURE_URL" "two words" >"$tmp/out" ||
        fail "$1 exited with status $?"
    diff -u "$tmp/expected" "$tmp/out" || fail "$1: unexpected output"
    # Without a script: the usage line, with the engine's version.
    status=0
    "$tmp/$1" 2>"$tmp/usage" || status=$?
    [ "$status" -eq 2 ] && grep -q "(luacrawl [0-9]" "$tmp/usage" ||
        fail "$1 without arguments: status $status, $(cat "$tmp/usage")"
}

# Shared: the program needs libluacrawl.so.0 at run time.
cc -o "$tmp/embed_shared" "$src/examples/embed.c" $(pkg-config --cflags --libs luacrawl)
readelf -d "$tmp/embed_shared" | grep -q 'NEEDED.*\[libluacrawl\.so\.0\]' ||
    fail "embed_shared does not need libluacrawl.so.0"
LD_LIBRARY_PATH="$prefix/$libdir" check_program embed_shared

# Static: the engine is inside the program.
cc -o "$tmp/embed_static" "$src/examples/embed.c" $(pkg-config --cflags --libs luacrawl-static)
if readelf -d "$tmp/embed_static" | grep -q 'NEEDED.*libluacrawl'; then
    fail "embed_static needs libluacrawl.so"
fi
check_program embed_static

# The Lua module where luacrawl.pc says it is, loaded by plain luajit.
cmod=$(pkg-config --variable=INSTALL_CMOD luacrawl)
LUA_CPATH="$cmod/?.so" luajit -e 'print((require "luacrawl").version)' >"$tmp/out" ||
    fail "luajit cannot load the installed module from $cmod"
[ "$(cat "$tmp/out")" = "$(pkg-config --modversion luacrawl)" ] ||
    fail "module version $(cat "$tmp/out"), luacrawl.pc says $(pkg-config --modversion luacrawl)"
echo "install.embed: ok (shared, static, Lua module)"
