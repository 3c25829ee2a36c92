"""A 400 in the reader's language: the dashboard's zs_lang cookie, else the browser's
Accept-Language, picks Chinese for the API's own sentences and for Django's and DRF's; a
script that sends neither (the CLI, the SDK) gets English."""

from __future__ import annotations

from typing import Any

import pytest

from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/tenant-a/jobs/"


def _bad_body(cluster: Cluster) -> dict[str, Any]:
    # Ours (a bad variable name) and DRF's ("this field is required") in one answer.
    body = training_body(cluster.pool, env={"1st": "x"})
    del body["image"]
    return body


@pytest.mark.parametrize(
    ("cookie", "accept", "chinese"),
    [
        ("zh", "", True),
        ("", "zh-CN,zh;q=0.9,en;q=0.5", True),
        ("en", "zh-CN", False),  # the dashboard's choice over the browser's
        ("", "", False),
    ],
)
def test_field_errors_in_the_reader_s_language(
    world: World, client_for: Any, cluster: Cluster, cookie: str, accept: str, chinese: bool
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    if cookie:
        client.cookies["zs_lang"] = cookie
    headers = {"HTTP_ACCEPT_LANGUAGE": accept} if accept else {}
    answer = client.post(URL, _bad_body(cluster), format="json", **headers)
    assert answer.status_code == 400
    body = answer.json()
    if chinese:
        assert body["detail"] == "输入无效。"
        assert body["errors"]["env"] == ["无效的变量名：1st。"]
        assert body["errors"]["image"] == ["该字段是必填项。"]
    else:
        assert body["detail"] == "Invalid input."
        assert body["errors"]["env"] == ["Invalid variable name(s): 1st."]
        assert body["errors"]["image"] == ["This field is required."]


def test_a_sentence_with_values_and_a_refusal_in_chinese(
    world: World, client_for: Any, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    client.cookies["zs_lang"] = "zh"
    too_big = training_body(cluster.pool, replica_groups=[{"name": "w", "replicas": 5,
                                                            "accelerators": 8}])  # fmt: skip
    answer = client.post(URL, too_big, format="json")
    assert answer.json()["errors"]["replica_groups"] == [
        f"该作业申请 40 张加速卡；资源池 {cluster.pool.name} 共有 32 张。"
    ]
    high = client.post(URL, training_body(cluster.pool, priority=1), format="json")
    assert high.json()["errors"]["priority"] == [
        "P1 可以抢占其他作业；只有租户管理员可以提交 P0-P2。"
    ]
