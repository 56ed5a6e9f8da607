# The DP-BO Explorer as a public, hosted explorer (docs/hosting.md).
# Hosting mode, the limits and Streamlit's settings are all environment variables below; the browser tests run
# this file's CMD with this file's ENV (tests/browser/test_hosted.py), so keep them here; `python -m hosting`
# runs the same CMD with the same ENV on a host without Docker (docs/hosting.md).
# STREAMLIT_LOGGER_HIDE_WELCOME_MESSAGE: no start-up banner of URLs, so Streamlit, bound to 0.0.0.0, does not
# ask a server on the internet for this machine's external IP ("Did not auto detect external IP").
# STREAMLIT_CLIENT_SHOW_ERROR_LINKS: an error box offers no buttons that send its message to other sites.
# STREAMLIT_RUNNER_FAST_RERUNS=false: a session's rerun stops its running script and reruns in the same thread;
# with fast reruns every rerun started a new thread while the old one was still stopping, and a flood of reruns
# piled up threads until the server's event loop (and its health check) waited seconds to start each one.
# STREAMLIT_RUNNER_POST_SCRIPT_GC=false: no full garbage collection after every script run; each one held Python's
# interpreter lock for a large part of a second on the server's heap, so a few runs a second stalled every thread
# (Python's own collector still runs as objects accumulate).
# The command serves app.py through serve.py (an st.App): Streamlit's metrics endpoint closed, an unexpected
# error one sentence (ui/kit/serving.py). A proxy in front on another address: set FORWARDED_ALLOW_IPS to its
# address so that each visitor's own address (X-Forwarded-For) counts for the caps per visitor (docs/hosting.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    DPBO_HOSTED=1 \
    DPBO_CACHE_DIR=/home/app/cache \
    DPBO_DATA_DIR=/home/app/data \
    DPBO_CACHE_MAX_MB=2048 \
    STREAMLIT_SERVER_MAX_UPLOAD_SIZE=20 \
    STREAMLIT_CLIENT_SHOW_ERROR_DETAILS=none \
    STREAMLIT_CLIENT_SHOW_ERROR_LINKS=false \
    STREAMLIT_CLIENT_TOOLBAR_MODE=viewer \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false \
    STREAMLIT_SERVER_HEADLESS=true \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    STREAMLIT_SERVER_RUN_ON_SAVE=false \
    STREAMLIT_RUNNER_FAST_RERUNS=false \
    STREAMLIT_RUNNER_POST_SCRIPT_GC=false \
    STREAMLIT_LOGGER_HIDE_WELCOME_MESSAGE=true

# A user without a login shell owns only its cache and data folders; the code belongs to root and is read-only.
RUN useradd --create-home --uid 1000 --shell /usr/sbin/nologin app \
    && mkdir -p /home/app/cache /home/app/data && chown app:app /home/app/cache /home/app/data
WORKDIR /opt/dpbo-explorer

# Every transitive dependency pinned with its hashes (requirements.lock; docs/hosting.md says how to regenerate it).
COPY requirements.lock .
RUN pip install --no-deps --require-hashes -r requirements.lock

# Tests, benchmarks, CI files and local data stay out of the image (.dockerignore).
COPY . .
RUN chmod -R a-w /opt/dpbo-explorer
USER app

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status == 200 else 1)"

CMD ["streamlit", "run", "serve.py", "--server.address=0.0.0.0", "--server.port=8501"]
