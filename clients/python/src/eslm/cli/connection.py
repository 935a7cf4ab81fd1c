"""Where `eslm` connects and as whom: the environment variables the Elastic ecosystem uses
(`ELASTICSEARCH_URL` as go-elasticsearch reads it, comma-separated; `ELASTICSEARCH_API_KEY`,
`ELASTICSEARCH_USERNAME` and `ELASTICSEARCH_PASSWORD` as Elastic Agent's container reads them;
`ELASTICSEARCH_CA_CERTS`, named after elasticsearch-py's `ca_certs`, or Elastic Agent's
`ELASTICSEARCH_CA`), each overridden by its flag. Checked before anything is sent."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from .exits import Exit, Failure

DEFAULT_URL = "http://localhost:9200"
URL = "ELASTICSEARCH_URL"
API_KEY = "ELASTICSEARCH_API_KEY"
USERNAME = "ELASTICSEARCH_USERNAME"
PASSWORD = "ELASTICSEARCH_PASSWORD"
CA_CERTS = ("ELASTICSEARCH_CA_CERTS", "ELASTICSEARCH_CA")


def add_flags(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """The connection flags (each defaulting to `default`)."""
    group = parser.add_argument_group("connection (flags override the environment)")
    group.add_argument("--url", action="append", metavar="URL", default=default,
                       help=f"a node's URL; repeat it or separate URLs with commas (${URL}, default {DEFAULT_URL})")
    group.add_argument("--api-key", metavar="KEY", default=default, help=f"an API key, id:key or its base64 (${API_KEY})")
    group.add_argument("--username", metavar="USER", default=default, help=f"basic authentication (${USERNAME})")
    group.add_argument("--password", metavar="PASSWORD", default=default,
                       help=f"with --username (${PASSWORD}; prefer the variable: a flag shows in ps)")
    group.add_argument("--ca-certs", metavar="FILE", default=default, help=f"CA certificates (PEM) for https (${CA_CERTS[0]})")


@dataclass(frozen=True)
class Connection:
    urls: tuple[str, ...]
    api_key: str | None = None
    basic_auth: tuple[str, str] | None = None
    ca_certs: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace, environ: Mapping[str, str]) -> "Connection":
        """The connection the flags and the environment ask for; `Failure(USAGE)` if it is
        incomplete or contradictory. Credentials come from the flags when any is given, else
        from the environment, never half from each."""
        urls = urls_of(",".join(args.url) if args.url else environ.get(URL) or DEFAULT_URL)
        flagged = any(v is not None for v in (args.api_key, args.username, args.password))
        source = "flags" if flagged else "environment"
        if flagged:
            api_key, username, password = args.api_key, args.username, args.password
        else:
            api_key, username, password = environ.get(API_KEY), environ.get(USERNAME), environ.get(PASSWORD)
        if api_key and (username or password):
            raise Failure(Exit.USAGE, f"give an API key or a username and password, not both ({source})")
        if bool(username) != bool(password):
            missing = "--password" if username else "--username"
            raise Failure(Exit.USAGE, f"a username needs a password and a password a username: {missing} "
                                      f"(or ${PASSWORD if username else USERNAME}) is missing")
        ca_certs = args.ca_certs or next((environ[v] for v in CA_CERTS if environ.get(v)), None)
        if ca_certs is not None and not Path(ca_certs).is_file():
            raise Failure(Exit.USAGE, f"the CA certificates file [{ca_certs}] does not exist")
        return cls(urls, api_key or None, (username, password) if username else None, ca_certs)

    def client(self) -> Any:
        """The official client on these settings (nothing is sent yet)."""
        from elasticsearch import Elasticsearch

        options: dict = {}
        if self.api_key:
            options["api_key"] = self.api_key
        if self.basic_auth:
            options["basic_auth"] = self.basic_auth
        if self.ca_certs:
            options["ca_certs"] = self.ca_certs
        try:
            return Elasticsearch(list(self.urls), **options)
        except (ValueError, TypeError) as e:  # what the official client finds wrong in them
            raise Failure(Exit.USAGE, f"cannot connect to {', '.join(self.urls)}: {e}") from e


def urls_of(text: str) -> tuple[str, ...]:
    """Comma-separated URLs, each `http(s)://host:port` (a path prefix allowed, as behind a
    proxy); the port is required, as the official client requires it."""
    urls = tuple(u.strip() for u in text.split(",") if u.strip())
    if not urls:
        raise Failure(Exit.USAGE, "no Elasticsearch URL given")
    for url in urls:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as e:
            raise Failure(Exit.USAGE, f"[{url}] is not a URL: {e}") from e
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Failure(Exit.USAGE, f"[{url}] is not an http(s) URL: give one as http://localhost:9200")
        if port is None:
            raise Failure(Exit.USAGE, f"[{url}] names no port: give it, as in {parts.scheme}://{parts.hostname}:9200")
    return urls
