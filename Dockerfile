# faultline in a container, for the Kubernetes Indexed Job of deploy/k8s-indexed-job.yaml:
#   docker build -t registry.example.com/tools/faultline:0.1.0 .
# Stage 1 builds the stripped `dist` binary in the Rust image (a C compiler is needed for zstd);
# stage 2 is a slim Debian with that binary only, run as an unprivileged user.
FROM rust:1-slim-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist --bin faultline

FROM debian:bookworm-slim
COPY --from=build /src/target/dist/faultline /usr/local/bin/faultline
RUN useradd --system --uid 10001 --no-create-home faultline
USER 10001
ENTRYPOINT ["/usr/local/bin/faultline"]
CMD ["--help"]
