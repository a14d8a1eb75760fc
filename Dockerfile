# One image for every role; the command picks it. Point DATABASE_URL at a real
# PostgreSQL (the embedded one is for development) and set SECRET.
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

RUN useradd --system --home /app svc && mkdir -p /data && chown svc /data
USER svc
VOLUME /data
EXPOSE 4300 2525 2587

# --production refuses to boot with a development environment or a short SECRET.
CMD ["python", "-m", "gateway", "--production"]
