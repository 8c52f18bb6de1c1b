#!/usr/bin/env bash
# CI's container step: build the Containerfile and prove the image works, as root on a fresh
# Debian 12 machine that has no Docker engine and reaches no container registry (only the
# Debian and PyPI mirrors). Run from .ci/run; any failed check fails it. It keeps nothing:
# its container storage, base image and volumes live in a temporary folder, removed at the
# end (LAZY_CONTAINER_KEEP=1 keeps it, to look inside).
#
# 1. podman, runc, mmdebstrap and openssl from apt. crun, podman's default runtime, refuses
#    this kernel's hybrid cgroups and root here lacks CAP_SYS_RESOURCE for podman's default
#    rlimits: a containers.conf in the temporary folder sets runc and rlimits within ours.
# 2. A base without a registry: mmdebstrap bootstraps Debian 12 (its essential packages, no
#    apt) with python3, pip and useradd from the mirror apt uses, with this machine's extra
#    CA certificates (the egress proxy intercepts TLS) and without Debian's EXTERNALLY-MANAGED
#    marker, so pip behaves as in python:*-slim, and without manuals, translations and docs
#    (a fifth of the files: podman imports the rest in half the time); podman imports it and
#    the build gets it as BASE_IMAGE.
# 3. podman build --isolation=chroot --pull=never --format docker (OCI drops the HEALTHCHECK).
# 4. The checks: the record commands on a volume, seen again from a second container; the
#    stdio engine's handshake, a recall, shutdown and exit over stdin/stdout; the daemon over
#    TLS with a token on a published port, used by this machine's own `lazy` as its remote
#    store; the HEALTHCHECK healthy with the daemon up and unhealthy without it; SIGTERM
#    (`podman stop`) ending the daemon and the stdio engine with 0, the latter during a
#    burst of saves that must all be kept; editors/shell/lazy driving the image; and a
#    read-only root filesystem where only /data takes writes.
# 5. The image's size and the time from `podman run` to `initialize` answered go to
#    bench/results/container.json (python -m bench.container prints them as a table).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd -P)

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
seconds() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }
started=$(now_ms)
step_started=$started
step_name=
timings=()
step() { # ends the step running, noting its time, and starts the one named $1
    local now
    now=$(now_ms)
    if [ -n "$step_name" ]; then
        timings+=("$(printf '%-44s %6s s' "$step_name" "$(seconds $((now - step_started)))")")
        echo "   ${timings[-1]}"
    fi
    step_name=$1 step_started=$now
    [ -z "$1" ] || echo "-- container: $1"
}
fail() {
    echo "container: FAIL: $*" >&2
    exit 1
}
# Where podman cannot be had, say why; CI must not pass without the image having run.
cannot() {
    echo "container: not run: $*" >&2
    if [ "${CI:-}" = true ]; then exit 1; fi
    exit 0
}

# --- 1. packages ---------------------------------------------------------------------------
step "packages (podman, runc, mmdebstrap, openssl)"
[ "$(id -u)" = 0 ] || cannot "it needs root (apt-get, mmdebstrap, rootful podman)"
command -v apt-get >/dev/null || cannot "no apt-get: this script is for Debian machines"
missing=()
for tool in podman runc mmdebstrap openssl; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
    apt_get() { apt-get -o DPkg::Lock::Timeout=300 -qq "$@"; }
    if ! { apt_get update && apt_get install -y --no-install-recommends \
        podman runc mmdebstrap openssl >/dev/null; }; then
        cannot "apt-get could not install ${missing[*]}"
    fi
fi
host_lazy=(lazy)
command -v lazy >/dev/null || host_lazy=(python3 -m lazy_memory.rpc.cli)
"${host_lazy[@]}" --version >/dev/null || fail "no lazy on this machine: pip install -e . first"

# --- the temporary folder: container storage, configuration, certificates ------------------
work=$(mktemp -d /tmp/lazy-container.XXXXXX)
cat >"$work/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$work/storage"
runroot = "$work/run"
EOF
hard_nofile=$(ulimit -Hn)
[ "$hard_nofile" = unlimited ] && hard_nofile=1048576
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$hard_nofile:$hard_nofile", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
export CONTAINERS_STORAGE_CONF=$work/storage.conf CONTAINERS_CONF=$work/containers.conf
cleanup() {
    local status=$?
    if [ "${LAZY_CONTAINER_KEEP:-0}" = 1 ]; then
        echo "container: kept $work (CONTAINERS_STORAGE_CONF=$work/storage.conf" \
            "CONTAINERS_CONF=$work/containers.conf)" >&2
        return "$status"
    fi
    podman rm -af -t 0 >/dev/null 2>&1 || true
    podman volume rm -af >/dev/null 2>&1 || true
    podman rmi -af >/dev/null 2>&1 || true
    rm -rf "$work"
    return "$status"
}
trap cleanup EXIT

base=localhost/lazy-ci-base:bookworm
image=localhost/lazy-memory:ci
volume=lazy-ci-data
# podman has no systemd here to time the HEALTHCHECK: it says so on every container of an
# image that has one ("unable to get systemd connection"), harmlessly; that line is dropped.
quiet() { "$@" 2> >(grep -v 'systemd connection' >&2); }

# --- 2. the base image, from the Debian mirror ---------------------------------------------
step "base image: mmdebstrap"
mirror_of() { # the first URI in apt's sources whose path ends in /$1
    {
        sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) print $i }' \
            /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
    } | grep -m1 -E "/$1/?\$" || true
}
mirror=$(mirror_of debian)
security=$(mirror_of debian-security)
[ -n "$mirror" ] || fail "no Debian mirror in /etc/apt/sources.list*"
sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main")
[ -z "$security" ] || sources+=("deb $security bookworm-security main")
echo "mirror: $mirror${security:+, security: $security}"
# pip in the build reaches PyPI as this machine's does: same DNS and proxy variables (podman
# build passes those), the CA certificates copied in below and, when set, the index variables.
pip_conf=$work/pip.conf
: >"$pip_conf"
if [ -n "${PIP_INDEX_URL:-}${PIP_TRUSTED_HOST:-}" ]; then
    {
        echo "[global]"
        [ -z "${PIP_INDEX_URL:-}" ] || echo "index-url = $PIP_INDEX_URL"
        [ -z "${PIP_TRUSTED_HOST:-}" ] || echo "trusted-host = $PIP_TRUSTED_HOST"
    } >"$pip_conf"
fi
# shellcheck disable=SC2016 # the hooks' $1 (the new root) is mmdebstrap's, expanded by its shell
# essential, not minbase: the image needs no apt (useradd, in passwd, is the one tool added).
mmdebstrap --variant=essential --include=python3,python3-pip,python-is-python3,ca-certificates,passwd \
    --customize-hook='for f in /usr/local/share/ca-certificates/*.crt; do [ -e "$f" ] && cp "$f" "$1/usr/local/share/ca-certificates/"; done; chroot "$1" update-ca-certificates >/dev/null' \
    --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
    --customize-hook='rm -rf "$1"/usr/share/man/* "$1"/usr/share/info/* "$1"/usr/share/locale/*; find "$1"/usr/share/doc -type f ! -name copyright -delete' \
    --customize-hook="if [ -s '$pip_conf' ]; then cp '$pip_conf' \"\$1/etc/pip.conf\"; fi" \
    bookworm "$work/base.tar" "${sources[@]}" </dev/null >"$work/mmdebstrap.log" 2>&1 ||
    { tail -20 "$work/mmdebstrap.log"; fail "mmdebstrap"; }
step "base image: podman import"
podman import --quiet --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' \
    "$work/base.tar" "$base" >/dev/null
rm -f "$work/base.tar"
podman run --rm --network=none "$base" python -c \
    'import sys, pip; print("base:", sys.version.split()[0], "pip", pip.__version__)'

# --- 3. the build --------------------------------------------------------------------------
step "podman build"
podman build --isolation=chroot --pull=never --format docker --build-arg "BASE_IMAGE=$base" \
    -t "$image" -f Containerfile "$repo" >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; fail "podman build"; }
image_bytes=$(podman image inspect "$image" --format '{{.Size}}')
base_bytes=$(podman image inspect "$base" --format '{{.Size}}')
podman image inspect "$image" --format \
    'image: {{.Size}} bytes, user {{.Config.User}}, entrypoint {{.Config.Entrypoint}}, healthcheck {{.Config.Healthcheck.Test}}'
[ "$(podman image inspect "$image" --format '{{.Config.User}}')" = 10001 ] ||
    fail "the image does not run as its unprivileged user"

# --- 4. the checks -------------------------------------------------------------------------
# --network=none where nothing needs one; --no-healthcheck where no check is wanted (and
# podman has nothing to say about systemd).
run=(podman run --rm --network=none --no-healthcheck -v "$volume:/data")
lazy_in=("${run[@]}" --entrypoint lazy "$image")

step "record commands on a volume"
"${lazy_in[@]}" memory save ci-record -t project -d "saved in one container" --body "body one" ||
    fail "memory save"
listed=$("${lazy_in[@]}" memory list) || fail "memory list"
echo "$listed"
grep -q '^ci-record ' <<<"$listed" || fail "memory list in a second container misses the record"
[ "$("${lazy_in[@]}" memory show ci-record --raw)" = "body one" ] || fail "memory show"
echo "memory show ci-record --raw, in a third container: body one"

step "stdio engine over stdin and stdout"
python3 -m tests.support.container_probe session --expect ci-record -- "${run[@]}" -i "$image" ||
    fail "the stdio engine's session"

step "figures: podman run to initialize answered"
samples=3
initialize_ms=$(python3 -m tests.support.container_probe initialize --samples "$samples" -- \
    "${run[@]}" -i "$image") || fail "timing initialize"
echo_ms=$(python3 -m tests.support.container_probe echo --samples "$samples" -- \
    "${run[@]}" -i --entrypoint cat "$image") || fail "timing the floor"
echo "podman run to initialize answered: $initialize_ms ms (median of $samples); to cat's echo: $echo_ms ms"

step "daemon over TLS with a token, from this machine"
mkdir -p "$work/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" 2>/dev/null
chmod 0644 "$work/tls/key.pem" # read by the image's user; a key made for this run only
secret=$("${lazy_in[@]}" engine token add --role engine --name ci --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["secret"])') || fail "token add"
quiet podman run -d --name lazy-ci-daemon -p 127.0.0.1::7411 -v "$volume:/data" \
    -v "$work/tls:/tls:ro" "$image" \
    --listen tls:0.0.0.0:7411 --tls-cert /tls/cert.pem --tls-key /tls/key.pem >/dev/null
for _ in $(seq 100); do
    podman logs lazy-ci-daemon 2>&1 | grep -q 'daemon listening on' && break
    sleep 0.1
done
podman logs lazy-ci-daemon 2>&1 | grep 'daemon listening on' ||
    { podman logs lazy-ci-daemon; fail "the daemon did not start"; }
port=$(podman port lazy-ci-daemon 7411/tcp | sed 's/.*://')
mkdir -p "$work/host/.git"
remote() { # this machine's lazy, with the daemon as its store (and $token, if set, as its token)
    (cd "$work/host" && LAZY_DATA=$work/host/.lazy LAZY_STORAGE=remote \
        LAZY_REMOTE=tls:127.0.0.1:$port LAZY_TOKEN=${token:-$secret} \
        LAZY_TLS_CA=$work/tls/cert.pem "${host_lazy[@]}" "$@")
}
listed=$(remote memory list) || fail "lazy memory list against the daemon"
grep -q '^ci-record ' <<<"$listed" || fail "lazy memory list against the daemon misses a record"
remote memory save from-host -t project -d "saved over TLS" --body "body two" ||
    fail "lazy memory save against the daemon"
[ "$("${lazy_in[@]}" memory show from-host --raw)" = "body two" ] ||
    fail "the save over TLS is not in the volume's store"
echo "lazy on this machine, LAZY_REMOTE=tls:127.0.0.1:$port: list and save; the save is in the volume"
if refused=$(token=lzm_not-a-token remote memory list 2>&1); then
    fail "the daemon served a client with a bad token"
fi
echo "a bad token: refused ($refused)"

step "HEALTHCHECK, and SIGTERM stopping the daemon"
quiet podman healthcheck run lazy-ci-daemon || fail "HEALTHCHECK with the daemon listening"
echo "HEALTHCHECK with the daemon listening: healthy"
stop_started=$(now_ms)
quiet podman stop -t 3 lazy-ci-daemon >/dev/null
stop_ms=$(($(now_ms) - stop_started))
status=$(podman inspect lazy-ci-daemon --format '{{.State.ExitCode}}')
echo "podman stop -t 3 (the daemon): $(seconds "$stop_ms") s, exit status $status"
[ "$status" = 0 ] || fail "the daemon exited $status on SIGTERM"
quiet podman rm lazy-ci-daemon >/dev/null
quiet podman run -d -i --name lazy-ci-stdio --network=none -v "$volume:/data" "$image" >/dev/null
if quiet podman healthcheck run lazy-ci-stdio >/dev/null 2>&1; then
    fail "HEALTHCHECK passed with nothing on port 7411"
fi
echo "HEALTHCHECK of a stdio engine (nothing on 7411): unhealthy"
# As PID 1 a process ignores what it has no handler for: wait for the engine's handler (the
# first thing it sets up), seen from here in its SigCgt mask, then stop it.
pid=$(podman inspect lazy-ci-stdio --format '{{.State.Pid}}')
for _ in $(seq 200); do
    mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$mask" ] && (((16#$mask >> 14) & 1)) && break
    sleep 0.05
done
quiet podman stop -t 3 lazy-ci-stdio >/dev/null
status=$(podman inspect lazy-ci-stdio --format '{{.State.ExitCode}}')
echo "podman stop -t 3 (an idle stdio engine): exit status $status"
[ "$status" = 0 ] || fail "the stdio engine exited $status on SIGTERM"
quiet podman rm lazy-ci-stdio >/dev/null

step "SIGTERM during a burst of saves"
python3 -m tests.support.container_probe burst --stop "podman stop -t 3 lazy-ci-burst" \
    --history "podman run --rm --network=none --no-healthcheck -v $volume:/data --entrypoint lazy $image memory history --json" \
    -- podman run --network=none --no-healthcheck -v "$volume:/data" -i --name lazy-ci-burst \
    "$image" ||
    fail "SIGTERM during a burst"
quiet podman rm lazy-ci-burst >/dev/null

step "editors/shell/lazy driving the image"
# A copy away from the checkout: next to its flake.nix, with nix installed, it would use nix.
mkdir -p "$work/shim/bin" "$work/shim/project/.git"
cp editors/shell/lazy "$work/shim/bin/lazy"
(
    cd "$work/shim/project"
    export LAZY_IMAGE=$image
    quiet "$work/shim/bin/lazy" memory save via-shim -t project -d "saved through the shim" --body b3
    quiet "$work/shim/bin/lazy" memory list
) >"$work/shim.out" || { cat "$work/shim.out"; fail "the shim"; }
cat "$work/shim.out"
grep -q '^via-shim ' "$work/shim.out" || fail "the shim's list misses its save"
[ -n "$(ls -A "$work/shim/project/.lazy")" ] || fail "the shim kept no store in <project>/.lazy"
echo "the shim ran the image; its store is in the project's .lazy folder"

step "read-only root filesystem, /data writable"
read_only=("${run[@]}" --read-only --read-only-tmpfs=false)
"${read_only[@]}" --entrypoint lazy "$image" memory save read-only -t project -d "d" --body b4 ||
    fail "memory save with a read-only root filesystem"
[ "$("${read_only[@]}" --entrypoint lazy "$image" memory show read-only --raw)" = b4 ] ||
    fail "memory show with a read-only root filesystem"
"${read_only[@]}" --entrypoint python "$image" -c '
import errno, os, sys
# Every folder a process of the image could write in without --read-only, and /data.
places = ["/", "/tmp", "/var/tmp", "/run", os.path.expanduser("~"), "/etc", "/usr/local",
          sys.prefix, "/data"]
writable = []
for place in places:
    try:
        with open(os.path.join(place, ".lazy-probe"), "w"):
            pass
        os.remove(os.path.join(place, ".lazy-probe"))
        writable.append(place)
    except OSError as error:
        assert error.errno in (errno.EROFS, errno.EACCES), (place, error)
print("writable:", writable, "of", places)
sys.exit(0 if writable == ["/data"] else 1)
' || fail "a place other than /data takes writes"

step ""
total_ms=$(($(now_ms) - started))
printf '%s\n' "${timings[@]}"
echo "container step: $(seconds "$total_ms") s in all; image $((image_bytes / 1000000)) MB" \
    "(base $((base_bytes / 1000000)) MB)"
python3 -m bench.container --image "$image" --base "Debian 12 essential + python3, pip (mmdebstrap)" \
    --image-bytes "$image_bytes" --base-bytes "$base_bytes" --initialize-ms "$initialize_ms" \
    --echo-ms "$echo_ms" --samples "$samples" --seconds "$(seconds "$total_ms")" \
    --json "${LAZY_CONTAINER_JSON:-bench/results/container.json}"
