"""The official client sends its compatibility media type and checks `X-Elastic-Product` on
every 2xx answer (it refuses an answer without it). Both, on every endpoint the client uses,
over raw HTTP so a missing header shows here and not as a puzzling client error."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import elasticsearch

from lockclient import unique

# The media type of the official client these tests run with (8.x or 9.x: both are supported).
COMPAT = f"application/vnd.elasticsearch+json; compatible-with={elasticsearch.__version__[0]}"


def call(url: str, method: str, path: str, body) -> tuple[int, dict, dict]:
    conn = http.client.HTTPConnection(urlsplit(url).netloc, timeout=30)
    try:
        payload = None if body is None else json.dumps(body)
        conn.request(method, path, payload, {"Content-Type": COMPAT, "Accept": COMPAT})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read())
    finally:
        conn.close()


def test_every_endpoint_answers_the_compatible_media_type_with_the_product_header(es_node):
    key, owner = unique(), unique("owner")
    acquired = call(es_node.url, "POST", f"/_locks/{key}/_acquire", {"owner": owner, "acquisition": owner})
    session = call(es_node.url, "POST", "/_locks/_session", {"owner": owner})
    sid = session[2]["session"]
    answers = [
        acquired, session,
        call(es_node.url, "POST", f"/_locks/{key}/_renew", {"owner": owner, "acquisition": owner}),
        call(es_node.url, "GET", f"/_locks/{key}", None),
        call(es_node.url, "POST", f"/_locks/{key}/_release", {"owner": owner, "acquisition": owner}),
        call(es_node.url, "POST", "/_locks/_acquire", {"owner": owner, "locks": [{"key": key}]}),
        call(es_node.url, "POST", "/_locks/_release", {"owner": owner, "all": True}),
        call(es_node.url, "POST", f"/_locks/_session/{sid}/_keepalive", {"owner": owner}),
        call(es_node.url, "DELETE", f"/_locks/_session/{sid}", {"owner": owner}),
    ]
    for status, headers, body in answers:
        assert status == 200, body
        headers = {k.lower(): v for k, v in headers.items()}
        assert headers.get("x-elastic-product") == "Elasticsearch", (headers, body)
        assert headers["content-type"].startswith("application/vnd.elasticsearch+json"), headers
