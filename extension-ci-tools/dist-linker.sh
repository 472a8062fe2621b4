#!/usr/bin/env bash
# Linker for `make dist` (set as cargo's target linker by the Makefile). For the extension cdylib
# only (output .../libacl.so), it replaces the version script rustc generates — which exports every
# #[no_mangle] function — with extension-ci-tools/acl.map, which exports acl_duckdb_cpp_init alone.
# GNU ld accepts one anonymous version script, so it is a replacement, not an addition.
# Every other link (build scripts, proc macros) passes through unchanged.
set -euo pipefail
map="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/acl.map"
cc="${ACL_DIST_CC:-cc}"

ours=0
prev=
for a in "$@"; do
    if [[ $prev == -o && $a == */libacl.so ]]; then ours=1; fi
    prev=$a
done
if [[ $ours == 0 ]]; then exec "$cc" "$@"; fi

args=()
replaced=0
for a in "$@"; do
    case $a in
        -Wl,--version-script=*) args+=("-Wl,--version-script=$map"); replaced=1 ;;
        @*)  # a response file: rewrite a copy
            tmp="$(mktemp)"; trap 'rm -f "$tmp"' EXIT
            sed "s|^-Wl,--version-script=.*|-Wl,--version-script=$map|" "${a#@}" > "$tmp"
            grep -q -- "--version-script=$map" "$tmp" && replaced=1
            args+=("@$tmp") ;;
        *) args+=("$a") ;;
    esac
done
if [[ $replaced == 0 ]]; then
    echo "dist-linker.sh: rustc passed no version script for libacl.so; refusing to guess" >&2
    exit 1
fi
"$cc" "${args[@]}"
