"""The embedded default: one process, SQLite, in-process worker and channel layer.

DATABASE_URL and REDIS_URL switch the same command to PostgreSQL and Redis.
"""

from config import env
from config.settings.base import *  # noqa: F403 - settings modules extend the base by design
from config.settings.base import DATA_DIR

DEBUG = env.get_bool("ZS_DEBUG", True)
# A fixed key is acceptable only for the local embedded default; prod requires ZS_SECRET_KEY.
SECRET_KEY = env.get_str("ZS_SECRET_KEY", "dev-only-insecure-key-zhisuan-embedded-default")
DATA_DIR.mkdir(parents=True, exist_ok=True)
