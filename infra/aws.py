"""boto3 clients, made one way for every AWS service docassay talks to.

    client("s3" | "textract" | "s3vectors" | "dsql", region=None) -> botocore client

boto3 is an optional dependency (`pip install 'docassay[aws]'`); without it, asking for a client
raises `ConfigError`. Region: the argument, else `$AWS_REGION` / `$AWS_DEFAULT_REGION`, else
`us-east-1`. Endpoints follow boto3's own configuration, so `AWS_ENDPOINT_URL` (or
`AWS_ENDPOINT_URL_S3`, ...) points docassay at a local stand-in such as `moto_server`.
Credentials come from the usual chain (environment, profile, instance role); none are read here.

Calls time out (connect 5 s, read 60 s) and are retried by botocore's `standard` mode on
throttling and transient errors, so one slow response cannot hang a scheduled run.
"""
from __future__ import annotations

import os
from typing import Any

from docassay.infra.errors import ConfigError

__all__ = ["client", "default_region", "DEFAULT_REGION"]

DEFAULT_REGION = "us-east-1"
CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 60
MAX_ATTEMPTS = 5


def default_region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def client(service: str, region: str | None = None) -> Any:
    """A boto3 client for `service` with docassay's timeouts and retries."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError as exc:
        raise ConfigError(f"talking to AWS ({service}) needs boto3: pip install 'docassay[aws]'",
                          setting=service) from exc
    cfg = Config(connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S,
                 retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"})
    return boto3.client(service, region_name=region or default_region(), config=cfg)
