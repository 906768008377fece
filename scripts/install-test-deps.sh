#!/usr/bin/env bash
# Installs what the test suites need, or checks that it is there.
#
# Idempotent: running it again changes nothing. Today `go test ./...` needs
# only Go and a C compiler (pg_query_go compiles PostgreSQL's parser,
# libpg_query, through cgo), so this only verifies those and prints their
# versions. The client and PostgreSQL-oracle suites (build tags `clients`,
# `pgoracle`) will add their installs here.
set -euo pipefail

missing=0
need() {
	local tool=$1 hint=$2
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install-test-deps: '$tool' not found on PATH: $hint" >&2
		missing=1
	fi
}
need go "install Go 1.26 or newer (https://go.dev/dl/)"
need gcc "install a C compiler, e.g. 'apt-get install gcc' (pg_query_go builds libpg_query with cgo)"
if ((missing)); then
	exit 1
fi

# cgo must be on, or pg_query_go does not build.
if [[ "$(go env CGO_ENABLED)" != "1" ]]; then
	echo "install-test-deps: cgo is disabled (go env CGO_ENABLED=$(go env CGO_ENABLED)); set CGO_ENABLED=1" >&2
	exit 1
fi

echo "go:  $(go version)"
# sed, not head: head may close the pipe early and pipefail would see SIGPIPE.
echo "gcc: $(gcc --version | sed -n 1p)"
