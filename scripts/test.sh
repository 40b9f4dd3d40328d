#!/usr/bin/env bash
# The whole check: lint, types, the layering contract and the test suite.
# The static checks (mypy is most of their ~25 s of CPU) run beside the tests rather than before them, so the
# run ends as soon as the slower of the two does; each check still runs in full, its output is printed after
# the tests, and the script fails naming every check that failed (README: CI keeps the run under 5 minutes
# on 2 cores).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export QT_QPA_PLATFORM=offscreen
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# Bytecode for this run, kept in its temporary folder: where the environment sets PYTHONDONTWRITEBYTECODE (this
# sandbox does), every process (both workers and each subprocess test) compiled torch and transformers from
# source again: `import torch, transformers, advisor.cli` takes 8.2 s of CPU then, 3.7 s once cached. Nothing
# is written beside the sources or into the virtual environment, and the cache goes with the run.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$log/pycache"

static_checks() {
  local failed=() start=$SECONDS
  .venv/bin/ruff check advisor tests benchmarks || failed+=("ruff check")
  .venv/bin/ruff format --check advisor tests benchmarks scripts || failed+=("ruff format --check")
  .venv/bin/mypy || failed+=("mypy")
  .venv/bin/lint-imports || failed+=("lint-imports")
  echo "scripts/test.sh: the static checks took $((SECONDS - start)) s"
  printf '%s\n' "${failed[@]}" >"$log/failed"
}
static_checks >"$log/static.txt" 2>&1 &
checks=$!

# worksteal: a worker that runs out of tests takes queued ones from the other, so both finish together;
# --durations: the slowest tests in every log, where the 5-minute budget is kept
.venv/bin/python -m pytest -q -n 2 --dist worksteal --durations=15 "$@"
tests=$?

wait "$checks"
cat "$log/static.txt"
failed=()
if [ -f "$log/failed" ]; then
  while IFS= read -r name; do [ -n "$name" ] && failed+=("$name"); done <"$log/failed"
else
  failed+=("the static checks (they stopped early)")
fi
[ "$tests" -eq 0 ] || failed+=("pytest (exit code $tests)")
if [ ${#failed[@]} -gt 0 ]; then
  printf 'scripts/test.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
