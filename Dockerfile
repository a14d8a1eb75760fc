# One image for every role; the command picks it (deploy/ runs the gateway,
# `python -m gateway migrate` and each `python -m mta` daemon from it).
# Point DATABASE_URL at a real PostgreSQL (the embedded one is for
# development) and set SECRET.
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

# uid 999: the manifests under deploy/kubernetes/ run as it.
RUN useradd --system --uid 999 --home /app svc && mkdir -p /data/blobs && chown -R svc /data
USER svc
VOLUME /data
EXPOSE 4300 4400 2525 2587 2465

# --production refuses to boot with a development environment or a short SECRET.
CMD ["python", "-m", "gateway", "--production"]
