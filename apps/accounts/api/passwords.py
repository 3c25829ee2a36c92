"""The platform's password rules, said in the reader's language."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext_lazy

# What an audit entry's ``after`` says of a password that was set (the value stays redacted).
CHANGED = "<redacted: changed>"

# Django's own words for these lack a Chinese translation in the release we run (its catalogue
# still has an older msgid), so the rules we enable (settings AUTH_PASSWORD_VALIDATORS) are said
# in ours; a rule added later without an entry here keeps Django's message.
_PASSWORD_RULES = {
    "password_too_short": gettext_lazy(
        "This password is too short: use at least {min_length} characters."
    ),
    "password_too_common": gettext_lazy("This password is too common; choose another."),
}


def password_errors(exc: DjangoValidationError) -> list[str]:
    """Each broken rule's sentence."""
    said: list[str] = []
    for error in exc.error_list:
        rule = _PASSWORD_RULES.get(error.code or "")
        params = error.params if isinstance(error.params, dict) else {}
        said.append(str(rule).format(**params) if rule is not None else " ".join(error.messages))
    return said
