# Image for docker-compose's `web` service: gunicorn, reached through the `nginx` service
# (config/nginx/nginx.conf). Heroku uses the Procfile instead.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /srv/app
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY . .
RUN useradd --system --home /srv/app app && mkdir -p instance && chown -R app /srv/app/instance
USER app

ENV APP_ENV=production PORT=8000
EXPOSE 8000
CMD ["sh", "-c", "flask --app app db upgrade && exec gunicorn --config gunicorn.conf.py 'app:create_app()'"]
