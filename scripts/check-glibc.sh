#!/usr/bin/env bash
# The C library a binary needs, for the manylinux tag: for each ELF file given, or each one inside a
# given wheel, the highest GLIBC_ symbol version it asks for (objdump -T) and the libraries it
# loads (readelf -d). Fails when one asks for a version newer than the floor (--max, default 2.28:
# manylinux_2_28) or loads a library that is not part of the C library (libc, libpthread, libdl,
# librt, libm, the loader), each of which every manylinux system has.
#   usage: scripts/check-glibc.sh [--max 2.28] FILE.whl|ELF...
set -u
max=2.28
[ "${1:-}" = --max ] && { max=$2; shift 2; }
allowed=" libc.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libm.so.6 ld-linux-x86-64.so.2 "
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
files=()
for f in "$@"; do
    case "$f" in
    *.whl)
        d=$tmp/$(basename "$f")
        python3 -m zipfile -e "$f" "$d" || exit 1
        while IFS= read -r e; do files+=("$e"); done < <(find "$d" -type f -exec sh -c \
            'head -c 4 "$1" | grep -q "ELF"' sh {} \; -print | sort)
        ;;
    *) files+=("$f") ;;
    esac
done
[ ${#files[@]} -gt 0 ] || { echo "check-glibc: no ELF file found in $*"; exit 1; }
for f in "${files[@]}"; do
    top=$(objdump -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
    needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    name=${f#"$tmp"/}
    verdict=ok
    if [ -z "$top" ]; then
        verdict="FAIL (no GLIBC_ version read)"
    elif [ "$(printf '%s\n%s\n' "$top" "$max" | sort -V | tail -1)" != "$max" ]; then
        verdict="FAIL (newer than GLIBC_$max)"
    fi
    for l in $needed; do
        case "$allowed" in *" $l "*) ;; *) verdict="FAIL ($l is not part of the C library)" ;; esac
    done
    printf '%-6s %s: GLIBC_%s, needs %s\n' "${verdict%% *}" "$name" "$top" "$needed"
    [ "$verdict" = ok ] || { echo "       $verdict"; fail=1; }
done
[ $fail = 0 ] && echo "check-glibc: ${#files[@]} files need GLIBC_$max or older" || echo "check-glibc: FAILED"
exit $fail
