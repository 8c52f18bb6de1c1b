#!/usr/bin/env bash
# CI's flake check, offline first: flake.nix must parse, and its outputs (packages, apps and
# dev shells, for every system) must evaluate against a stand-in nixpkgs (.ci/nix-stub) that
# defines only the attributes the flake uses, so a misspelt attribute, package or argument
# fails here. Against the real nixpkgs it is checked too, where it can be fetched and the
# Nix is new enough (nixpkgs refuses Nix older than 2.18); otherwise it says why not.
# Nothing is built, and no lock file is written.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nix-instantiate >/dev/null; then
    apt-get update -qq && apt-get install -y -qq nix-bin >/dev/null
fi
# Root without build users: fine, as nothing is built (and Nix would warn on every command).
export NIX_CONFIG=$'build-users-group =\nexperimental-features = nix-command flakes'
nix-instantiate --parse flake.nix >/dev/null
echo "flake: parses"

check=(flake check --no-build --no-write-lock-file)
# Nix 2.19 and later check only this machine's system unless told otherwise; 2.8 checks all.
if nix flake check --help 2>/dev/null | grep -q -- '--all-systems'; then
    check+=(--all-systems)
fi
# Nix's warnings (a dirty tree, the lock file it does not write) are noise.
noise='Git tree .* is dirty|lock file|Added input|^ *.path:|^evaluating flake'
if ! out=$(nix "${check[@]}" --override-input nixpkgs "path:$PWD/.ci/nix-stub" 2>&1); then
    grep -Ev "$noise" <<<"$out" >&2 || true
    echo "flake: FAIL: its outputs do not evaluate against the stand-in nixpkgs" >&2
    exit 1
fi
echo "flake: packages, apps and dev shells evaluate for every system (stand-in nixpkgs)"

version=$(nix --version | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1)
if [ "$(printf '%s\n' 2.18 "$version" | sort -V | head -1)" != 2.18 ]; then
    echo "flake: not checked against the real nixpkgs: this Nix is $version, nixpkgs needs 2.18 or newer"
    exit 0
fi
if ! out=$(timeout 300 nix flake metadata --no-write-lock-file 2>&1); then
    echo "flake: not checked against the real nixpkgs: it cannot be fetched here" \
        "($(grep -m1 -E '^error' <<<"$out" || echo "nix flake metadata failed"))"
    exit 0
fi
if ! out=$(timeout 600 nix "${check[@]}" 2>&1); then
    grep -Ev "$noise" <<<"$out" >&2 || true
    echo "flake: FAIL: nix flake check against the real nixpkgs" >&2
    exit 1
fi
echo "flake: nix flake check against the real nixpkgs: ok"
