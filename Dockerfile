# rightsizer's image: `docker build -t rightsizer:VERSION .`, VERSION being setup.cfg's version (the
# chart's appVersion, the tag it uses by default; `rightsizer --version` prints it).
# Two stages: the builder installs the package and its dependencies (setup.cfg) into a virtualenv;
# the final image holds that virtualenv only, and runs as a non-root user.
# The simulated cluster (app/simulator) is not in the build context (.dockerignore) and its extra
# is not installed: the image serves, it does not simulate (`rightsizer sim` and `demo` say so).

FROM python:3.11-slim AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/rightsizer
WORKDIR /src
COPY pyproject.toml setup.cfg README.md ./
COPY app ./app
COPY wsgi.py ./
RUN /opt/rightsizer/bin/pip install .
# `rightsizer db upgrade` looks for the Alembic scripts beside the installed `app` package
# (app/__init__.py, _migrations_dir), and setup.cfg does not package them: put them there.
COPY migrations ./migrations
RUN site="$(/opt/rightsizer/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
 && cp -r migrations "$site/migrations" \
 && /opt/rightsizer/bin/python -m compileall -q "$site/migrations" \
 && /opt/rightsizer/bin/rightsizer --help >/dev/null \
 && if /opt/rightsizer/bin/python -c 'import app.simulator' 2>/dev/null; then \
      echo "app.simulator is in the image" >&2; exit 1; fi

FROM python:3.11-slim
LABEL org.opencontainers.image.title="rightsizer" \
      org.opencontainers.image.description="Right-sizes Kubernetes workloads" \
      org.opencontainers.image.licenses="Apache-2.0"
# 65532: the conventional "nonroot" uid; the chart's securityContext runs as it too. The working
# directory is writable by it, so the default SQLite file (rightsizer.db) works in `docker run`.
RUN groupadd --gid 65532 rightsizer \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /var/lib/rightsizer \
      --shell /usr/sbin/nologin rightsizer \
 && install -d -o 65532 -g 65532 -m 0750 /var/lib/rightsizer
COPY --from=builder /opt/rightsizer /opt/rightsizer
# Bytecode was compiled at install time; the root filesystem is read-only in the chart, where /tmp
# is an emptyDir: HOME points there for what writes under it (gunicorn's control socket).
ENV PATH=/opt/rightsizer/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp
WORKDIR /var/lib/rightsizer
USER 65532:65532
# HTTPS when RIGHTSIZER_TLS_CERT_FILE/KEY_FILE are set (the chart sets RIGHTSIZER_BIND=0.0.0.0:8443),
# else plain HTTP on 8080.
EXPOSE 8443 8080
ENTRYPOINT ["rightsizer"]
CMD ["serve"]
