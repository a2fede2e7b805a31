"""Settings for the whole test run: no warm-up of the query layer (``dashboard.ui.warm``) in any app a test starts,
in process or as a server, since its queries would run beside the tests' own."""

import os

os.environ["PLANNER_WARM_UP"] = "0"
