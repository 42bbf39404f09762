# syntax=docker/dockerfile:1
# understudy: the sync worker, with /healthz, /readyz, /metrics and the queue dashboard on port 9464.
# Build: docker build -t understudy .   Run: see docker-compose.yml and docs/operations.md.
# The build steps are the commands CI runs (`npm ci`, whose `prepare` script is `npm run build`).

# Pinned: the Node line CI uses (package.json engines >= 20.19). Bump deliberately, with CI.
ARG NODE_IMAGE=node:20.19.5-bookworm-slim

# --- build: every dependency, better-sqlite3 compiled from source, TypeScript built to dist/ ---------------------
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY migrations ./migrations
COPY bench ./bench
# `npm ci` runs `prepare` (the build) once the dependencies are in.
RUN npm ci --no-audit --no-fund

# --- prod-deps: runtime dependencies only; scripts off (prepare would build), then better-sqlite3 compiled ------
FROM ${NODE_IMAGE} AS prod-deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 \
 && npm cache clean --force

# --- runtime: no compilers, no dev dependencies, not root ----------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    UNDERSTUDY_DB=/data/understudy.db
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The SQLite mirror lives on a volume; the config (and a keys file, re-read on SIGHUP) is mounted at /config.
RUN mkdir -p /data /config && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 9464
# No curl in the slim image: Node's fetch probes the liveness endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# `--` first: Node 20 would read an `--env-file` among understudy's flags as its own (docs/operations.md).
ENTRYPOINT ["node", "--", "bin/understudy"]
CMD ["worker", "--config", "/config/understudy.json", "--http", "9464", "--http-host", "0.0.0.0"]
