from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from apps.quotas import services
from apps.quotas.models import Quota


class QuotaForm(forms.ModelForm[Quota]):
    """The same rule as the API: a pool's guarantees never add up to more than it has."""

    class Meta:
        model = Quota
        fields = ["tenant", "pool", "accelerator_model", "guarantee", "borrow_limit", "weight"]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        tenant, pool = data.get("tenant"), data.get("pool")
        model, guarantee = data.get("accelerator_model"), data.get("guarantee")
        if tenant and pool and model and guarantee is not None:
            try:
                services.validate_guarantees(
                    pool=pool, accelerator_model=str(model), tenant=tenant, guarantee=int(guarantee)
                )
                services.validate_covers_usage(
                    tenant=tenant, pool=pool, accelerator_model=str(model),
                    limit=int(guarantee) + int(data.get("borrow_limit") or 0),
                )  # fmt: skip
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    self.add_error(field if field in self.fields else None, messages)
        return data


@admin.register(Quota)
class QuotaAdmin(admin.ModelAdmin[Quota]):
    form = QuotaForm
    list_display = ("tenant", "pool", "accelerator_model", "guarantee", "borrow_limit", "weight")
    list_filter = ("pool", "accelerator_model")
