# scripts/bench_lib.sh — pieces shared by the benchmarks (scripts/bench,
# scripts/bench-crawl, scripts/bench-frontier). Sourced, not run:
#
#   bench_name=bench; here=...; root=...; source "$here/bench_lib.sh"
#
# The sourcing script sets bench_name (the prefix of its messages), here (scripts/)
# and root (the repository); work (its scratch directory) before bench_start_nginx
# and bench_wrk_script; tasks (connections) and wrk_secs before run_wrk.
#
# shellcheck shell=bash
# Globals come from the sourcing script or go to it:
# shellcheck disable=SC2154,SC2034

log() { printf '%s: %s\n' "$bench_name" "$*" >&2; }

# The comment block at the top of the sourcing script, from line 2 to `set -euo`.
bench_usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

# Install what is missing (scripts/bootstrap) and check the tools: sets nginx.
# nginx lives in sbin, which a non-root PATH may lack; time must be GNU time, not
# the shell keyword.
bench_check_tools() {
    "$here/bootstrap" >&2
    nginx=$(PATH=$PATH:/usr/sbin:/sbin command -v nginx || true)
    [[ -n "$nginx" ]] || { log "missing nginx (see scripts/bootstrap)"; exit 1; }
    local tool
    for tool in wrk /usr/bin/time python3 timeout; do
        command -v "$tool" >/dev/null || { log "missing $tool (see scripts/bootstrap)"; exit 1; }
    done
}

# The binary to measure: $LUACRAWL_BIN, or build/ built here (Release). Sets bin.
bench_build() {
    if [[ -n "${LUACRAWL_BIN:-}" ]]; then
        bin=$LUACRAWL_BIN
    else
        log "building build/ (Release)"
        local build_log
        build_log=$(mktemp -t luacrawl-bench-build.XXXXXX)
        if ! { cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release &&
            cmake --build "$root/build" -j"$(nproc)"; } >"$build_log" 2>&1; then
            tail -n 30 "$build_log" >&2
            rm -f "$build_log"
            log "build failed"
            exit 1
        fi
        rm -f "$build_log"
        bin=$root/build/luacrawl
    fi
    [[ -x "$bin" ]] || { log "no luacrawl binary at $bin"; exit 1; }
}

# TERM a process started here, KILL it after 5 s.
stop_pid() {
    local pid=$1
    [[ -n "$pid" ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Wait until http://127.0.0.1:$1$2 answers 200 (at most ~10 s).
wait_http() {
    python3 - "$1" "$2" <<'EOF'
import sys, time, http.client
port, path = int(sys.argv[1]), sys.argv[2]
for _ in range(100):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        c.request("GET", path)
        if c.getresponse().status == 200:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
sys.exit(1)
EOF
}

# The figures assume an otherwise idle machine; say so when it is not.
load_note() {
    local load
    load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
    if awk -v l="$load" 'BEGIN { exit !(l >= 0.5) }'; then
        log "note: load average $load $1: other processes compete for the CPU; figures will be noisy"
    fi
}

# Open files as high as allowed; sets nofile.
bench_raise_nofile() {
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    nofile=$(ulimit -n)
}

# Serve the site $work/site ($1 pages) with nginx on a free port of 127.0.0.1
# (keep-alive on, logs off, $2 worker processes; with bench_gzip_static=1, each file's
# FILE.gz, made beforehand, to a client that accepts gzip), ready when $3 (default
# /index.html) answers. Sets nginx_pid, port, base.
bench_start_nginx() {
    local pages=$1 nginx_workers=$2 ready=${3:-/index.html} gzip_static=''
    [[ "${bench_gzip_static:-0}" == 1 ]] && gzip_static="    gzip_static on;"
    port=$(free_port)
    # nginx's open_file_cache saves an open/fstat/close per request, but only when
    # every page fits: cycling through more files than the cache holds would thrash it.
    local open_file_cache='' ofc=off user_line=''
    if [[ "${BENCH_OPEN_FILE_CACHE:-1}" == 1 && "$nofile" != unlimited && $((pages + 4200)) -lt "$nofile" ]]; then
        open_file_cache="    open_file_cache max=$((pages + 100)) inactive=120s;"
        ofc=on
    fi
    mkdir -p "$work/nginx"
    [[ $(id -u) -eq 0 ]] && user_line="user root;"
    cat >"$work/nginx/nginx.conf" <<EOF
$user_line
worker_processes $nginx_workers;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
daemon off;
events {
    worker_connections 4096;
    multi_accept on;
}
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 100000;
    keepalive_timeout 65;
$open_file_cache
$gzip_static
    types { text/html html; application/json json; }
    default_type application/octet-stream;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    server {
        listen 127.0.0.1:$port;
        root $work/site;
    }
}
EOF
    "$nginx" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" \
        </dev/null >"$work/nginx/stdout.log" 2>&1 &
    nginx_pid=$!
    if ! wait_http "$port" "$ready"; then
        log "nginx did not come up:"
        cat "$work/nginx/error.log" "$work/nginx/stdout.log" >&2 || true
        exit 1
    fi
    log "nginx ($nginx_workers worker(s), open_file_cache $ofc${gzip_static:+, gzip_static}) on 127.0.0.1:$port"
    base=http://127.0.0.1:$port
}

# The wrk script: every thread cycles through all page paths, as the crawler
# fetches every page.
bench_wrk_script() {
    cat >"$work/wrk_paths.lua" <<EOF
local paths = {}
for line in io.lines("$work/site/paths.txt") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
EOF
}

# run_wrk THREADS [TIME_FILE] -> prints requests/s (0 when wrk failed); its output
# is in $work/wrk_t$THREADS.txt. With TIME_FILE, wrk runs under /usr/bin/time -f
# "%e %U %S %M" (wall, user, sys, peak RSS KB) written there. wrk_script, when set,
# is the script instead of bench_wrk_script's.
run_wrk() {
    local t=$1 out=$work/wrk_t$1.txt
    local timed=()
    [[ -n "${2:-}" ]] && timed=(/usr/bin/time -f "%e %U %S %M" -o "$2")
    if ! timeout $((wrk_secs + 30)) "${timed[@]}" wrk -t"$t" -c"$tasks" -d"${wrk_secs}s" --latency \
        -s "${wrk_script:-$work/wrk_paths.lua}" "$base/" >"$out" 2>&1; then
        log "wrk -t$t failed:"
        cat "$out" >&2
        echo 0
        return
    fi
    if grep -q "Non-2xx" "$out"; then log "wrk -t$t saw non-2xx responses:"; cat "$out" >&2; fi
    awk '/^Requests\/sec:/ { print $2 }' "$out"
}

# bench_perf_record CMD... — record CMD with `perf record -g` (when perf is
# installed) and keep the top of the profile in $work/perf.{dso,self,incl}.
# perf_what names the run in the message (default: a second crawl).
bench_perf_record() {
    if ! command -v perf >/dev/null; then
        log "--perf: perf is not installed"
        return 0
    fi
    log "perf record on ${perf_what:-a second crawl}"
    # DWARF unwinding (the libraries have no frame pointers) at a low rate, so
    # inclusive costs per engine function come out right and the data stays small.
    if timeout 600 perf record --call-graph dwarf,16384 -F 250 -o "$work/perf.data" \
        -- "$@" >/dev/null 2>"$work/perf.err"; then
        perf report -i "$work/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null |
            grep -E '^ +[0-9]+\.[0-9]+%' | sed 's/[ -]*$//' | head -n 10 >"$work/perf.dso" || true
        perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null |
            grep -E '^ +[0-9]+\.[0-9]+%' | sed 's/[ -]*$//' | head -n 20 >"$work/perf.self" || true
        perf report -i "$work/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
            grep -E '^ +[0-9]+\.[0-9]+%' | sed 's/[ -]*$//' | grep -v '0x0000' |
            grep -vE '\] (_start|__libc_start|main|call_cli|lua_pcall|lua_cpcall|l_run|sched_run|loop_run)' |
            head -n 30 >"$work/perf.incl" || true
    else
        log "perf record failed:"
        tail -n 5 "$work/perf.err" >&2
    fi
}

# Print what bench_perf_record kept, if anything.
bench_perf_print() {
    if [[ -s "$work/perf.dso" ]]; then
        echo
        echo "perf (crawl, self time by object):"
        cat "$work/perf.dso"
        echo "perf (crawl, top symbols, self time):"
        cat "$work/perf.self"
        echo "perf (crawl, inclusive time: children, self, symbol; main and the run loop left out):"
        cat "$work/perf.incl"
    fi
}
