"""A local S3-compatible server for the end-to-end tests: moto's S3 (moto[server], from PyPI) as a
WSGI app on 127.0.0.1, started and stopped by the tests themselves (tests/conftest.py, fixture
`s3`). Two things are added in front of moto:

- Requests are handled one at a time. Moto checks `If-None-Match: *` on PutObject and on
  CompleteMultipartUpload (moto/s3/responses.py, 5.2.5) by looking the key up and then storing
  the object: two threads could both pass the check. S3 itself makes the check and the write one
  atomic step; the lock gives moto the same guarantee, so a lost commit found by a test is
  Fermion's, not the test server's.
- Every S3 request is recorded (method, path, query, Range header), for the tests that count
  requests: `GET /__fermion__/requests` returns them as JSON, `POST /__fermion__/reset` clears
  them. Bucket names cannot contain `_`, so these paths never reach moto.

Run: python tests/s3_server.py PORT   (prints "ready" once it listens)
"""
import json
import sys
import threading

from werkzeug.serving import make_server


def build_app():
    from moto.server import DomainDispatcherApplication, create_backend_app

    moto_app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()
    log = []

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/__fermion__/"):
            if path.endswith("/reset"):
                with lock:
                    log.clear()
                body = b"{}"
            else:
                with lock:
                    body = json.dumps(log).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        with lock:
            log.append({"method": environ.get("REQUEST_METHOD"), "path": path,
                        "query": environ.get("QUERY_STRING", ""), "range": environ.get("HTTP_RANGE", ""),
                        "ifNoneMatch": environ.get("HTTP_IF_NONE_MATCH", "")})
            # The response body is produced inside the lock too: moto builds it eagerly.
            chunks = list(moto_app(environ, start_response))
        return chunks

    return app


def main():
    port = int(sys.argv[1])
    server = make_server("127.0.0.1", port, build_app(), threaded=True)
    print("ready", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
