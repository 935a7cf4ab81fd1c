"""`POST /_locks/{key}/_downgrade` (docs/API.md, issue 49 item 5): a writer becomes a reader in one
step, so no waiting writer gets in between; readers that fit are let in; the token and the lease
stay; a late or wrong downgrade changes nothing."""

from __future__ import annotations

import threading
import uuid

import pytest

pytestmark = pytest.mark.every_version


def key() -> str:
    return f"down-{uuid.uuid4().hex[:8]}"


def take(client, k: str, owner: str, **body):
    return client.post(f"/_locks/{k}/_acquire", {"owner": owner, "acquisition": owner, **body})


def test_a_downgrade_lets_a_queued_reader_in_and_keeps_a_writer_out(client):
    k = key()
    writer = take(client, k, "w", lease="30s").json()
    reader_answer = {}
    reader = threading.Thread(target=lambda: reader_answer.update(
        r=take(client, k, "r", mode="shared", wait="20s")))
    reader.start()
    down = client.post(f"/_locks/{k}/_downgrade", {"owner": "w", "acquisition": "w", "mode": "shared"})
    assert down.status_code == 200, down.text
    body = down.json()
    assert body["mode"] == "shared" and body["fencing_token"] == writer["fencing_token"], body
    assert 0 < body["lease_ms"] <= 30_000
    reader.join(25)
    assert reader_answer["r"].status_code == 200, reader_answer["r"].text
    assert take(client, k, "other-writer", wait=0).status_code == 409, "a writer got in beside the readers"
    holders = client.get(f"/_locks/{k}").json()["holders"]
    assert sorted((h["owner"], h["mode"]) for h in holders) == [("r", "shared"), ("w", "shared")]


def test_a_downgrade_that_names_another_grant_or_a_stronger_mode_changes_nothing(client):
    k = key()
    token = take(client, k, "w").json()["fencing_token"]
    late = client.post(f"/_locks/{k}/_downgrade", {"owner": "w", "fencing_token": token - 1, "mode": "shared"})
    assert late.status_code == 404 and late.json()["error"]["type"] == "lock_not_held_exception", late.text
    client.post(f"/_locks/{k}/_downgrade", {"owner": "w", "acquisition": "w", "mode": "shared"})
    stronger = client.post(f"/_locks/{k}/_downgrade", {"owner": "w", "acquisition": "w", "mode": "exclusive"})
    assert stronger.status_code == 400 and "[mode]" in stronger.text, stronger.text
    missing = client.post(f"/_locks/{k}/_downgrade", {"owner": "w", "acquisition": "w"})
    assert missing.status_code == 400 and "[mode] is required" in missing.text, missing.text
    assert [h["mode"] for h in client.get(f"/_locks/{k}").json()["holders"]] == ["shared"]
