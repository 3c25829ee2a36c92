"""The notebook proxy's own pages (sign in first, not yours, not running...) in the reader's
language.

They are plain HTML from the server, not the dashboard, so the dashboard's catalogue does not
reach them: the dashboard sets the ``zs_lang`` cookie when the language is chosen, and a
browser that never opened it is read by its ``Accept-Language``. English is the fallback.
"""

from __future__ import annotations

import html

from django.http import HttpRequest, HttpResponse

LANGUAGES = ("en", "zh")
LANGUAGE_COOKIE = "zs_lang"

MESSAGES: dict[str, dict[str, str]] = {
    "signIn": {"en": "Sign in to the platform first.", "zh": "请先登录平台。"},
    "crossSite": {
        "en": "Cross-site requests to a notebook are refused.",
        "zh": "拒绝来自其他站点的开发环境请求。",
    },
    "noSuch": {"en": "No such notebook.", "zh": "没有这个开发环境。"},
    "notYours": {
        "en": "Only the notebook's owner or a tenant admin can open it.",
        "zh": "只有开发环境的所有者或租户管理员可以打开它。",
    },
    "notRunning": {
        "en": "Notebook {name} is {state}, not running.",
        "zh": "开发环境 {name} 当前状态为“{state}”，未在运行。",
    },
    "notServing": {
        "en": "Notebook {name} is not serving yet: {detail}",
        "zh": "开发环境 {name} 尚未就绪：{detail}",
    },
    "noAddress": {
        "en": "The cluster could not say where notebook {name} is.",
        "zh": "集群无法给出开发环境 {name} 的地址。",
    },
    "noAnswer": {
        "en": "Notebook {name} did not answer; try again in a moment.",
        "zh": "开发环境 {name} 没有响应，请稍后再试。",
    },
}

# Job states as the dashboard names them (jobState in frontend/src/lib/i18n/zh.ts).
STATES_ZH = {
    "submitted": "已提交",
    "queued": "排队中",
    "admitted": "已准入",
    "dispatching": "分发中",
    "running": "运行中",
    "preempted": "被抢占",
    "restarting": "重启中",
    "succeeded": "成功",
    "failed": "失败",
    "cancelled": "已取消",
}

_FRAME = {
    "en": ("Notebook", "Back to notebooks", "en"),
    "zh": ("开发环境", "返回开发环境列表", "zh-CN"),
}


def language_of(request: HttpRequest) -> str:
    """The dashboard's choice (cookie), else the browser's first language, else English."""
    chosen = request.COOKIES.get(LANGUAGE_COOKIE, "")
    if chosen in LANGUAGES:
        return chosen
    first = request.META.get("HTTP_ACCEPT_LANGUAGE", "").split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def text(key: str, language: str, **args: str) -> str:
    """One message of the catalogue; a job state argument is named in the same language."""
    if language == "zh" and "state" in args:
        args = {**args, "state": STATES_ZH.get(args["state"], args["state"])}
    return MESSAGES[key][language if language in LANGUAGES else "en"].format(**args)


def page(request: HttpRequest, status: int, key: str, **args: str) -> HttpResponse:
    language = language_of(request)
    title, back, lang = _FRAME[language]
    body = (
        f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'>"
        f"<title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{html.escape(text(key, language, **args))}</p>"
        f"<p><a href='/notebooks'>{back}</a></p></body></html>"
    )
    response = HttpResponse(body, status=status, content_type="text/html; charset=utf-8")
    response["Content-Language"] = lang
    response["Vary"] = "Cookie, Accept-Language"
    return response
