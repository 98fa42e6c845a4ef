#!/usr/bin/env bash
# CI, after scripts/test.sh: braze installs as users install it.
# 1. scripts/setup.sh's .venv imports braze without PYTHONPATH (its
#    braze-build.pth names build/python).
# 2. `pip install .` into a fresh virtual environment builds from scratch
#    the way pip does (scikit-build-core, Release: -O3, which the -O2
#    development build does not compile), then, from another folder,
#    `import braze` computes and `braze doctor` runs from PATH.
# Takes about 10 minutes on 2 cores, nearly all of it pip's build (the
# packages pip fetches for its isolated build: scikit-build-core, nanobind).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/braze-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "check_install: $*" >&2; exit 1; }

# What the checks import must come from the place under test, never from a
# PYTHONPATH the caller has.
unset PYTHONPATH

cd "$work"
if [ -x "$src/.venv/bin/python" ]; then
  got=$("$src/.venv/bin/python" -c 'import braze; print(braze.__file__)') ||
    fail ".venv/bin/python cannot import braze without PYTHONPATH (run scripts/setup.sh)"
  case "$got" in
    "$src/build/python/"*) ;;
    *) fail ".venv's braze is $got, not this checkout's build/python" ;;
  esac
fi

start=$SECONDS
"${PYTHON:-python3}" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
# build-dir: a build from scratch here, not pyproject.toml's build/ of the
# checkout, which an earlier `pip install .` may have left.
"$work/venv/bin/python" -m pip install -q "$src" --config-settings=build-dir="$work/build" ||
  fail "pip install . failed"
echo "check_install: pip install . took $((SECONDS - start)) s"

got=$("$work/venv/bin/python" -c 'import braze; print(braze.tensor([1.0]).numpy())') ||
  fail "the installed braze does not import"
[ "$got" = "[1.]" ] || fail "braze.tensor([1.0]).numpy() printed '$got', not '[1.]'"
"$work/venv/bin/python" -c 'import braze, sys; assert braze.__file__.startswith(sys.prefix), braze.__file__' ||
  fail "braze was not imported from the fresh environment"
[ "$(PATH="$work/venv/bin:$PATH" command -v braze)" = "$work/venv/bin/braze" ] ||
  fail "pip install . put no braze command on the environment's PATH"
PATH="$work/venv/bin:$PATH" braze doctor >"$work/doctor.txt" || fail "braze doctor failed: $(cat "$work/doctor.txt")"
grep -q "^cpu: generated code targets" "$work/doctor.txt" || fail "braze doctor said: $(cat "$work/doctor.txt")"
echo "check_install: ok (import braze computes from another folder; braze doctor runs from PATH)"
