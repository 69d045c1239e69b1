# Parley server image. Stage 1 installs, compiles and trains the example assistant
# (examples/coffee); stage 2 keeps only what `parley run` needs and runs as a non-root user.
#
#   docker build -t parley .
#   docker run -p 5005:5005 -e DATABASE_URL=postgres://… parley
#
# Another model: mount it over /app/models (or load it from MinIO/S3 with --remote-storage aws).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# `npm install`, not `npm ci`: the lockfile cannot list other platforms' optional binaries, and
# npm 11's `npm ci` refuses it for that (see .ci/run); `npm install` still installs exactly the
# lockfile's versions.
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build \
  && node bin/parley.js train --data examples/coffee/data --domain examples/coffee/domain.yml \
       --config examples/coffee/config.yml --out models --fixed-model-name coffee \
  && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
# PARLEY_MODEL: the archive trained above; set it (and PARLEY_REMOTE_STORAGE) to serve another.
ENV NODE_ENV=production \
    PARLEY_DATA_DIR=/app/.parley \
    PARLEY_MODEL=models
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/bin ./bin
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/models ./models
COPY --from=build --chown=node:node /app/examples ./examples
COPY --from=build --chown=node:node /app/keycloak ./keycloak
COPY --from=build --chown=node:node /app/deploy ./deploy
# The image's own user (uid 1000), never root; it owns /app (data dir, models trained over HTTP).
RUN mkdir -p /app/.parley && chown node:node /app /app/.parley
USER node
EXPOSE 5005
ENTRYPOINT ["node", "bin/parley.js"]
CMD ["run", "--enable-api"]
