#!/bin/sh
# install.embed (tests/CMakeLists.txt): install a build into a temporary prefix,
# build examples/embed.c against it with nothing but what pkg-config says, once with
# the shared library (luacrawl.pc) and once with the static one (luacrawl-static.pc),
# and run each on fetch_page.lua, which fetches a page from the fixture server
# (LC_FIXTURE_URL, from tests/fixtures/run.py --http). Also loads the installed Lua
# module from plain luajit. Then the hosts of examples/embed/ and two of the tests'
# own (stop_host.c, two_engines.c), built the same way against the shared library,
# crawl the fixture site (examples/embed/site_crawl.lua); poll_host and items_host
# again under valgrind when it is installed (LC_EMBED_VALGRIND=0: not).
# A sanitizer build's libraries are instrumented (install.embed.sanitize): the ASan
# runtime must then be in the executable, so every program here is compiled with
# LC_EMBED_CFLAGS too (-fsanitize=...), and plain luajit runs with LC_EMBED_PRELOAD
# (the sanitizer runtimes) in LD_PRELOAD.
#   test_embed.sh BUILD_DIR SOURCE_DIR LIBDIR
set -eu
build=$1 src=$2 libdir=$3
cflags=${LC_EMBED_CFLAGS:-}
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
cc $cflags -o "$tmp/embed_shared" "$src/examples/embed.c" $(pkg-config --cflags --libs luacrawl)
readelf -d "$tmp/embed_shared" | grep -q 'NEEDED.*\[libluacrawl\.so\.0\]' ||
    fail "embed_shared does not need libluacrawl.so.0"
LD_LIBRARY_PATH="$prefix/$libdir" check_program embed_shared

# Static: the engine is inside the program.
cc $cflags -o "$tmp/embed_static" "$src/examples/embed.c" $(pkg-config --cflags --libs luacrawl-static)
if readelf -d "$tmp/embed_static" | grep -q 'NEEDED.*libluacrawl'; then
    fail "embed_static needs libluacrawl.so"
fi
check_program embed_static

# The Lua module where luacrawl.pc says it is, loaded by plain luajit.
cmod=$(pkg-config --variable=INSTALL_CMOD luacrawl)
LUA_CPATH="$cmod/?.so" LD_PRELOAD="${LC_EMBED_PRELOAD:-${LD_PRELOAD:-}}" luajit -e 'print((require "luacrawl").version)' >"$tmp/out" ||
    fail "luajit cannot load the installed module from $cmod"
[ "$(cat "$tmp/out")" = "$(pkg-config --modversion luacrawl)" ] ||
    fail "module version $(cat "$tmp/out"), luacrawl.pc says $(pkg-config --modversion luacrawl)"
# ---- hosts that drive the engine themselves (docs/embedding.md) ----
export LD_LIBRARY_PATH="$prefix/$libdir"
script=$src/examples/embed/site_crawl.lua
site=$LC_FIXTURE_URL/site/
build_host() { # SOURCE NAME
    cc -Wall -Wextra -Werror $cflags -o "$tmp/$2" "$1" $(pkg-config --cflags --libs luacrawl) ||
        fail "cannot build $2 against the installed prefix"
}
build_host "$src/examples/embed/poll_host.c" poll_host
build_host "$src/examples/embed/items_host.c" items_host
build_host "$src/tests/install/stop_host.c" stop_host
build_host "$src/tests/install/two_engines.c" two_engines
# Pages with an item: /site/ and each /site/p/N.html (not /site/moved, a redirect).
pages=$(($(curl -s "$LC_FIXTURE_URL/site/manifest.json" | tr ',' '\n' | grep -c '\.html"') + 1))
[ "$pages" -gt 100 ] || fail "the fixture site has $pages pages"

# poll_host: its own timer ticks while the crawl runs; every page is an item.
"$tmp/poll_host" "$script" "$site" "$tmp/poll.jsonl" >"$tmp/out" 2>"$tmp/err" ||
    fail "poll_host: status $?: $(cat "$tmp/err")"
grep -q "^done: $pages items, [1-9][0-9]* progress lines, status 0$" "$tmp/out" ||
    fail "poll_host: $(tail -1 "$tmp/out") (expected $pages items and progress lines)"
[ "$(grep -c '^progress: ' "$tmp/out")" -ge 1 ] || fail "poll_host printed no progress"
[ "$(wc -l <"$tmp/poll.jsonl")" -eq "$pages" ] || fail "poll_host: output has $(wc -l <"$tmp/poll.jsonl") lines"
[ ! -s "$tmp/err" ] || fail "poll_host wrote on stderr: $(cat "$tmp/err")"

# items_host: the items through the callback, the script asking the host (keep)
# and telling it (done).
"$tmp/items_host" "$script" "$site" "" 40 >"$tmp/out" 2>"$tmp/err" ||
    fail "items_host: status $?: $(cat "$tmp/err")"
[ "$(grep -c '^item {"' "$tmp/out")" -eq 40 ] || fail "items_host: $(grep -c '^item ' "$tmp/out") items, not 40"
grep -q '^script done: {"[a-z]*":40,"[a-z]*":40}$' "$tmp/out" || fail "items_host: no 'script done' line"
grep -q '^items: 40 (kept 40, refused 0), status 0$' "$tmp/out" || fail "items_host: $(tail -1 "$tmp/out")"

# stop_host: stopped from the callback after 50 items; every item recorded before
# the stop reached the callback, as many as the output file holds; the crawl's log
# (its SIGINT line, its report) went to the log callback, nothing to stderr.
SITE_CRAWL_VERBOSE=1 "$tmp/stop_host" "$script" "$site" "$tmp/stop.jsonl" 50 \
    "$LC_FIXTURE_URL/hostsite/" >"$tmp/out" 2>"$tmp/err" || fail "stop_host: status $?"
n=$(sed -n 's/^items //p' "$tmp/out")
lines=$(wc -l <"$tmp/stop.jsonl")
[ "$n" -ge 50 ] && [ "$n" -lt "$pages" ] && [ "$n" -eq "$lines" ] ||
    fail "stop_host: $n items through the callback, $lines in the output, $pages pages"
grep -q '^status 0$' "$tmp/out" || fail "stop_host: $(grep status "$tmp/out")"
grep -q '^add_url: 0 {"queued":true}$' "$tmp/out" || fail "stop_host: $(grep add_url "$tmp/out")"
grep -q "^no_such_fn: -1 no function 'no_such_fn' exposed" "$tmp/out" || fail "stop_host: lc_engine_call of a missing function"
grep -q '^log: luacrawl: got SIGINT' "$tmp/out" || fail "stop_host: no SIGINT line in the log"
grep -q '^log: stopped: SIGINT' "$tmp/out" || fail "stop_host: no report in the log"
! grep -q 'not refused\|^bad item' "$tmp/out" || fail "stop_host: $(grep 'refused\|bad item' "$tmp/out")"
[ ! -s "$tmp/err" ] || fail "stop_host wrote on stderr: $(cat "$tmp/err")"

# two_engines: one poll() loop stepping two crawls in turn, both whole, the second
# with items already when the first ended.
"$tmp/two_engines" "$script" "$site" "$tmp/e1.jsonl" "$tmp/e2.jsonl" >"$tmp/out" || fail "two_engines: status $?"
grep -q '^interleaved yes$' "$tmp/out" || fail "two_engines: the crawls did not run side by side: $(cat "$tmp/out")"
for i in 0 1; do
    grep -q "^engine $i: status 0, items $pages, stepped yes$" "$tmp/out" ||
        fail "two_engines: $(cat "$tmp/out")"
done
[ "$(cat "$tmp/e1.jsonl" | wc -l)" -eq "$pages" ] && [ "$(cat "$tmp/e2.jsonl" | wc -l)" -eq "$pages" ] ||
    fail "two_engines: outputs of $(wc -l <"$tmp/e1.jsonl") and $(wc -l <"$tmp/e2.jsonl") lines"

# Under valgrind: no memory error, no definite leak (LuaJIT frees its state at
# lua_close, which lc_engine_free calls).
if [ "${LC_EMBED_VALGRIND:-1}" != 0 ] && command -v valgrind >/dev/null; then
    vg="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite -q"
    $vg "$tmp/poll_host" "$script" "$site" "$tmp/poll_vg.jsonl" 100 >"$tmp/out" 2>"$tmp/err" ||
        fail "poll_host under valgrind: status $?: $(cat "$tmp/err")"
    grep -q '^done: 100 items, .* status 0$' "$tmp/out" || fail "poll_host under valgrind: $(tail -1 "$tmp/out")"
    $vg "$tmp/items_host" "$script" "$site" "" 30 >"$tmp/out" 2>"$tmp/err" ||
        fail "items_host under valgrind: status $?: $(cat "$tmp/err")"
    grep -q '^items: 30 (kept 30, refused 0), status 0$' "$tmp/out" || fail "items_host under valgrind: $(tail -1 "$tmp/out")"
    echo "install.embed: hosts ok under valgrind"
fi
echo "install.embed: ok (shared, static, Lua module, poll_host, items_host, stop_host, two_engines)${cflags:+ built with $cflags}"
