# mvserver container image.
#
#   docker build -t mvserver .
#   docker run --name mvserver -v mvdata:/data mvserver
#
# Build stage. pg_query_go compiles PostgreSQL's parser (libpg_query, C)
# through cgo, so the build needs gcc, which the golang bookworm image has.
FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/mvserver ./cmd/mvserver

# Runtime stage. The cgo binary links glibc dynamically, so the base is the
# same Debian release as the build image (not scratch, alpine or a static
# distroless image). Time zones are embedded in the binary (time/tzdata).
FROM debian:bookworm-slim
RUN apt-get update \
	&& apt-get install -y --no-install-recommends ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
# A fixed non-root uid/gid, so volume ownership is predictable. /data is
# created and chowned before VOLUME: changes to a path after it is declared
# a volume are discarded. A new named volume copies this ownership; a bind
# mount keeps the host's, so make that directory writable by uid 10001.
RUN groupadd --gid 10001 mvserver \
	&& useradd --uid 10001 --gid mvserver --home-dir /data --no-create-home \
		--shell /usr/sbin/nologin mvserver \
	&& mkdir -p /data \
	&& chown mvserver:mvserver /data \
	&& chmod 0750 /data
COPY --from=build /out/mvserver /usr/local/bin/mvserver

ENV MVSERVER_DATA_DIR=/data
# MVSERVER_LISTEN is deliberately not set: the server keeps its default,
# 127.0.0.1:5433, the container's own loopback. Listening on all interfaces
# (MVSERVER_LISTEN=0.0.0.0:5433) is only safe once authentication is
# configured, and password authentication and TLS come in a later release.
# Until then the server refuses every client that is not on loopback (FATAL
# 28000), and connections through a published port (-p 5433:5433) arrive
# from the Docker network, not from loopback, so publishing the port is of
# no use yet, with or without 0.0.0.0. Clients must run in the container's
# network namespace (docker exec, a sidecar with --network container:NAME,
# or --network host on Linux).
VOLUME /data
# Documentation only: nothing is reachable on it from outside until
# authentication exists (see above).
EXPOSE 5433

# Numeric, so runtimes that check runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /data
# Exec form: mvserver is PID 1 and receives docker stop's SIGTERM itself; it
# handles SIGTERM/SIGINT and starts no child processes. Its default
# --shutdown-grace (5s) fits inside docker stop's default 10s.
ENTRYPOINT ["/usr/local/bin/mvserver"]
