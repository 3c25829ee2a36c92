"""The notebook proxy's own pages (sign in first, not yours, not running...) in the reader's
language.

They are plain HTML from the server, not the dashboard, so the dashboard's catalogue does not
reach them; Django's LocaleMiddleware picks the language as for the API's answers (the
dashboard's ``zs_lang`` cookie, else ``Accept-Language``, else English) and the sentences are
in locale/zh_Hans with the API's.
"""

from __future__ import annotations

import html

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _

from apps.jobs.models import state_word

MESSAGES = {
    "signIn": gettext_lazy("Sign in to the platform first."),
    "crossSite": gettext_lazy("Cross-site requests to a notebook are refused."),
    "noSuch": gettext_lazy("No such notebook."),
    "notYours": gettext_lazy("Only the notebook's owner or a tenant admin can open it."),
    "notRunning": gettext_lazy("Notebook {name} is {state}, not running."),
    "notServing": gettext_lazy("Notebook {name} is not serving yet: {detail}"),
    "noAddress": gettext_lazy("The cluster could not say where notebook {name} is."),
    "noAnswer": gettext_lazy("Notebook {name} did not answer; try again in a moment."),
}


def text(key: str, **args: str) -> str:
    """One message in the active language; a job state argument is named in it too."""
    if "state" in args:
        args = {**args, "state": state_word(args["state"])}
    return str(MESSAGES[key]).format(**args)


def page(request: HttpRequest, status: int, key: str, **args: str) -> HttpResponse:
    lang = "zh-CN" if (get_language() or "").startswith("zh") else "en"
    title, back = _("Notebook"), _("Back to notebooks")
    body = (
        f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'>"
        f"<title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{html.escape(text(key, **args))}</p>"
        f"<p><a href='/notebooks'>{back}</a></p></body></html>"
    )
    response = HttpResponse(body, status=status, content_type="text/html; charset=utf-8")
    response["Content-Language"] = lang
    patch_vary_headers(response, ("Cookie", "Accept-Language"))
    return response
