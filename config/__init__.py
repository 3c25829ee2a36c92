"""Django project configuration for Zhisuan (settings, URLs, ASGI, Celery)."""
