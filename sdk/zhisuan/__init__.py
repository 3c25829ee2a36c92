"""Zhisuan (智算) SDK: report training metrics and save checkpoints from inside a job.

import zhisuan
zhisuan.init()                       # identity from ZS_* variables set by the platform
zhisuan.config(lr=3e-4, batch=512)   # hyperparameters
lr = zhisuan.trial_params().get("lr", 3e-4)   # in a sweep's trial: its values
for step in ...:
    zhisuan.log(step, loss=loss, lr=lr)          # non-blocking
zhisuan.checkpoint.save(state, step)   # blocks only for the copy to host memory
if zhisuan.checkpoint_requested(): ...   # the platform asks for one (a stop is coming)
"""

__version__ = "0.1.0"

from zhisuan import checkpoint, efficiency
from zhisuan.client import ApiClient, ApiError
from zhisuan.run import Run, checkpoint_requested, current, finish, init, trial_params
from zhisuan.run import add_tags as tags
from zhisuan.run import log_metrics as log
from zhisuan.run import set_config as config

__all__ = [
    "ApiClient",
    "ApiError",
    "Run",
    "__version__",
    "checkpoint",
    "checkpoint_requested",
    "config",
    "current",
    "efficiency",
    "finish",
    "init",
    "log",
    "tags",
    "trial_params",
]
