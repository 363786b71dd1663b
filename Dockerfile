# drydock: the daemon on its embedded SQLite store, data in the /data volume.
#   docker build -t drydock .
#   docker run -p 8080:8080 -v drydock-data:/data -e ANTHROPIC_API_KEY=... \
#     --security-opt seccomp=unconfined --security-opt apparmor=unconfined drydock
# The first start prints the admin token once (docker logs); or set DRYDOCK_ADMIN_TOKEN.
# The execute phase runs commands in a bubblewrap sandbox, which creates user, mount and PID namespaces as the
# unprivileged `node` user. Docker's default seccomp profile (and AppArmor's docker-default) refuse the
# unshare/clone/mount calls that takes: relax them as above, or with a seccomp profile that allows unshare,
# clone with namespace flags, mount, umount2 and pivot_root. Never --privileged or CAP_SYS_ADMIN: bwrap needs
# neither. Without it, the start log says the sandbox is unavailable and Bash refuses to run (fail closed).

FROM node:22-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 is a native addon: a toolchain in case no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
# git: plans record the workspace commit and approved plans execute in git worktrees.
# bubblewrap: the sandbox every Bash command of an execution runs in. ripgrep: the Grep tool runs rg.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini bubblewrap ripgrep \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    DRYDOCK_HOST=0.0.0.0 \
    DRYDOCK_PORT=8080 \
    DRYDOCK_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY config ./config
# Run as the image's unprivileged `node` user; it owns the data volume.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.DRYDOCK_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# tini forwards SIGTERM so the daemon shuts down gracefully on `docker stop`.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/src/cli/main.js"]
CMD ["serve"]
