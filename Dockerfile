# Parley server image: build, then run the compiled CLI.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app /app
EXPOSE 5005
ENTRYPOINT ["node", "bin/parley.js"]
CMD ["run", "--enable-api", "--domain", "examples/coffee/domain.yml"]
