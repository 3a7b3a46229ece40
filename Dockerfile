# wabp in a container: the engine and Debian's headless Chromium, as a
# non-root user, Chromium's sandbox on (the engine reports it at
# GET /api/v1/browser/status; a runtime without unprivileged user namespaces
# needs a seccomp profile that allows them, see deploy/README.md).
#
#   docker build -t wabp .
#   docker run -p 8222:8222 -e WABP_AUTH_TOKEN=... wabp

FROM rust:1-slim-bookworm AS build
RUN rustup target add wasm32-wasip2
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin wabp

FROM debian:bookworm-slim
# Debian's stable packages get security fixes under the same name: not pinned.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium-headless-shell ca-certificates fonts-liberation \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 wabp
COPY --from=build /src/target/release/wabp /usr/local/bin/wabp
USER 10001
WORKDIR /home/wabp
# Off loopback the engine requires a token (WABP_AUTH_TOKEN or
# WABP_AUTH_TOKENS); it refuses to start without one.
ENV WABP_HOST=0.0.0.0 \
    WABP_PORT=8222 \
    WABP_SESSION_DIR=/home/wabp/session \
    WABP_PLUGINS=/home/wabp/plugins
EXPOSE 8222
# SIGTERM drains: no new sessions, actions in flight finish (WABP_DRAIN_SECS).
STOPSIGNAL SIGTERM
ENTRYPOINT ["wabp", "serve"]
