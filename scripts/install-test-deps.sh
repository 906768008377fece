#!/usr/bin/env bash
# Installs what the test suites need, or checks that it is there.
#
# Idempotent: running it again changes nothing. `go test ./...` needs only Go
# and a C compiler (pg_query_go compiles PostgreSQL's parser, libpg_query,
# through cgo): those are verified and their versions printed. The console's
# browser test (`go test -tags browser ./web/...`) drives headless Chromium:
# Debian's `chromium` package is installed with apt-get when it is missing.
# The client and PostgreSQL-oracle suites (build tags `clients`, `pgoracle`)
# will add their installs here.
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

# apt_install PKG...: installs Debian packages (as root, or through sudo).
apt_install() {
	local sudo=()
	if ((EUID != 0)); then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "install-test-deps: need root or sudo to install: $*" >&2
			return 1
		fi
		sudo=(sudo)
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "install-test-deps: no apt-get here; install these yourself: $*" >&2
		return 1
	fi
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

# Headless Chromium for the console's browser test (build tag `browser`),
# with a font so that screenshots show text.
if ! command -v chromium >/dev/null 2>&1; then
	echo "install-test-deps: installing chromium (the console's browser test needs it)"
	apt_install chromium fonts-dejavu-core
fi
need chromium "install Debian's 'chromium' package (apt-get install chromium)"
if ((missing)); then
	exit 1
fi

echo "go:  $(go version)"
# sed, not head: head may close the pipe early and pipefail would see SIGPIPE.
echo "gcc: $(gcc --version | sed -n 1p)"
echo "chromium: $(chromium --version 2>/dev/null | sed -n 1p)"
