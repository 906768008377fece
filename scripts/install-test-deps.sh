#!/usr/bin/env bash
# Installs what the test suites need, or checks that it is there.
#
# Idempotent: running it again changes nothing. `go test ./...` needs only Go
# and a C compiler (pg_query_go compiles PostgreSQL's parser, libpg_query,
# through cgo): those are verified and their versions printed. The console's
# browser test (`go test -tags browser ./web/...`) drives headless Chromium:
# Debian's `chromium` package is installed with apt-get when it is missing.
# The client suite (build tag `clients`) gets the real clients, PostgreSQL
# 15, `npm ci` of the Node.js drivers and ORMs and GORM's Go modules; the PostgreSQL-oracle suite (`pgoracle`)
# will add its installs here.
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

# The client suite (build tag `clients`, clienttest/): the real clients,
# PostgreSQL 15 as the oracle they also run against, and Java, Python and
# Node.js for the client programs. Each is checked by a file or a command;
# what is missing is installed with apt-get in one go.
client_pkgs=()
need_pkg() { # PACKAGE PATH: PACKAGE is missing when PATH does not exist
	if [[ ! -e $2 ]]; then
		client_pkgs+=("$1")
	fi
}
need_pkg postgresql-15 /usr/lib/postgresql/15/bin/postgres          # server (the oracle), initdb
need_pkg postgresql-client-15 /usr/lib/postgresql/15/bin/psql       # psql, pgbench
need_pkg libpostgresql-jdbc-java /usr/share/java/postgresql.jar     # pgjdbc 42.x
need_pkg default-jdk-headless /usr/bin/javac                        # javac and java
need_pkg python3-psycopg2 /usr/lib/python3/dist-packages/psycopg2   # for /usr/bin/python3
need_pkg odbc-postgresql /usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so # psqlODBC
need_pkg unixodbc /usr/bin/isql                                     # unixODBC's isql
need_pkg nodejs /usr/bin/node
need_pkg npm /usr/bin/npm
need_pkg sqlsmith /usr/bin/sqlsmith                                 # random queries (TestSqlsmith)
need_pkg python3-sqlalchemy /usr/lib/python3/dist-packages/sqlalchemy # TestSQLAlchemy
need_pkg python3-pandas /usr/lib/python3/dist-packages/pandas       # TestSQLAlchemy (read_sql_table, to_sql)
need_pkg pgcli /usr/bin/pgcli                                       # TestPgcli (its engine, pgspecial, psycopg 3)
if ((${#client_pkgs[@]})); then
	echo "install-test-deps: installing ${client_pkgs[*]} (the client suite needs them)"
	apt_install "${client_pkgs[@]}"
fi
# psql and pgbench are on PATH through Debian's postgresql-common wrappers.
for tool in psql pgbench isql javac java node npm; do
	need "$tool" "install the client suite's Debian packages (see above in this script)"
done
for mod in psycopg2 sqlalchemy pandas pgcli; do
	if ! /usr/bin/python3 -c "import $mod" 2>/dev/null; then
		echo "install-test-deps: /usr/bin/python3 cannot import $mod (apt-get install python3-$mod, or pgcli)" >&2
		missing=1
	fi
done
if ((missing)); then
	exit 1
fi
# node-postgres, knex, sequelize and postgres.js, at the versions
# package-lock.json pins, into testdata/clients/node/node_modules (npm ci:
# exactly the lock file; run again only when the lock file is newer than
# what is installed).
node_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/testdata/clients/node"
if [[ ! -f $node_dir/node_modules/.package-lock.json || $node_dir/package-lock.json -nt $node_dir/node_modules/.package-lock.json ]]; then
	echo "install-test-deps: npm ci in testdata/clients/node (node-postgres for the client suite)"
	(cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
# GORM and its PostgreSQL driver for TestGORM: testdata/clients/gorm is a
# module of its own (go.sum pins them); download them into the module
# cache (a no-op when they are there).
gorm_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/testdata/clients/gorm"
(cd "$gorm_dir" && go mod download)

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
echo "postgres: $(/usr/lib/postgresql/15/bin/postgres --version)"
echo "psql: $(psql --version), pgbench: $(pgbench --version)"
echo "pgjdbc: $(dpkg-query -W -f='${Version}' libpostgresql-jdbc-java 2>/dev/null || echo '?'), $(javac -version 2>&1)"
echo "psycopg2: $(/usr/bin/python3 -c 'import psycopg2; print(psycopg2.__version__)')"
pkgver() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$node_dir/node_modules/$1/package.json"; }
echo "node: $(node --version), pg: $(pkgver pg), knex: $(pkgver knex), sequelize: $(pkgver sequelize), postgres.js: $(pkgver postgres)"
echo "SQLAlchemy: $(/usr/bin/python3 -c 'import sqlalchemy; print(sqlalchemy.__version__)'), pandas: $(/usr/bin/python3 -c 'import pandas; print(pandas.__version__)'), pgcli: $(pgcli --version 2>/dev/null | sed -n 1p)"
echo "gorm: $(cd "$gorm_dir" && go list -m -f '{{.Version}}' gorm.io/gorm), driver: $(cd "$gorm_dir" && go list -m -f '{{.Version}}' gorm.io/driver/postgres)"
echo "isql: $(isql --version), psqlODBC: $(dpkg-query -W -f='${Version}' odbc-postgresql 2>/dev/null || echo '?')"
