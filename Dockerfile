# loopcord: the Discord bot as an image. The build stage runs the same commands as CI and
# `npm start` (npm ci, npm run build). Nothing compiles: better-sqlite3 ships its addon
# prebuilt for linux x64 and arm64 (glibc 2.34 or newer) inside its npm package.

FROM node:24-bookworm-slim AS build
# npm still runs better-sqlite3's node-gyp step, which only checks that the prebuilt addon is
# there, but gyp itself needs Python and make; with the base image's Node headers
# (/usr/local/include/node) it downloads nothing.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build
# dependencies are exactly what dist/ loads; effect and the build tools are devDependencies.
RUN npm prune --omit=dev
# better-sqlite3 needs only the addon for this platform at run time: the other platforms'
# prebuilt addons, its C++ sources, the SQLite amalgamation and gyp's output stay behind
# (about 25 MB).
RUN cd node_modules/better-sqlite3 \
 && addon="prebuilds/$(node -p 'process.platform + "-" + process.arch').node" \
 && { test -f "$addon" || { echo "better-sqlite3 has no $addon: this image builds on linux x64 and arm64" >&2; exit 1; }; } \
 && find prebuilds -type f ! -path "$addon" -delete \
 && rm -rf build deps src binding.gyp

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    RUN_ENV=production \
    DATABASE_URL=sqlite:./data/loopcord.db \
    HEALTH_PORT=8080 \
    HEALTH_HOST=0.0.0.0 \
    SHUTDOWN_GRACE_MS=7000
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# The SQLite database (the default DATABASE_URL) and generated media live here.
VOLUME ["/app/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEALTH_PORT || '8080') + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains: running replies get SHUTDOWN_GRACE_MS to finish, then what still runs is
# stopped with its text kept, and the process exits 0. An image cannot set its stop timeout,
# and `docker stop` sends SIGKILL after 10 s by default, so the image's grace is 7 s: stopping
# the rest and closing take about 1 s more (more on a busy host). For a longer grace give the
# container more time too (compose.yaml: 15 s with stop_grace_period 25s;
# docker run --stop-timeout 25 -e SHUTDOWN_GRACE_MS=15000).
STOPSIGNAL SIGTERM
# The V8 memory flags of `npm start` (src/discord/nodeMemoryFlags.ts says why).
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=60", "dist/main.js"]
