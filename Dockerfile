# ksched container image: build on Debian bookworm, run with only the shared libraries
# ksched links against, as a non-root user. `make image` (scripts/build-image.sh) builds
# it with buildah and checks that the runtime stage installs exactly the packages of the
# libraries the binary links. ccache in the build stage is used when the builder mounts
# a cache at /root/.cache/ccache (build-image.sh does); otherwise it only passes through.
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ccache cmake g++ make pkg-config libcpprest-dev libcurl4-openssl-dev libnghttp2-dev libyaml-cpp-dev libssl-dev \
      prometheus-cpp-dev libgtest-dev libgmock-dev libsimdjson-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# KSCHED_PREBUILT: a ksched binary already built from these sources on a bookworm host
# (a path in the build context; `make test` passes its Release build through
# scripts/build-image.sh), used instead of compiling the tree a second time.
ARG KSCHED_PREBUILT=
RUN if [ -n "$KSCHED_PREBUILT" ]; then \
      mkdir -p /build/cmd/ksched && cp "$KSCHED_PREBUILT" /build/cmd/ksched/ksched; \
    else \
      cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DKSCHED_WERROR=OFF \
      && cmake --build /build -j"$(nproc)" --target ksched; \
    fi \
    && strip /build/cmd/ksched/ksched

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcurl4 libnghttp2-14 libyaml-cpp0.7 libssl3 libcpprest2.10 libprometheus-cpp-core1.0 \
      libsimdjson14 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 65532 --no-create-home --shell /usr/sbin/nologin ksched
COPY --from=build /build/cmd/ksched/ksched /usr/local/bin/ksched
# Numeric, so the Deployment's runAsNonRoot can verify it; the same uid as its runAsUser.
# Nothing is written to the image at run time (readOnlyRootFilesystem); the self-signed
# serving certificate goes to --cert-dir, an emptyDir in manifests/deployment.yaml.
USER 65532:65532
EXPOSE 10259
ENTRYPOINT ["/usr/local/bin/ksched"]
