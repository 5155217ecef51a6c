"""The old name of :mod:`taskassign.task_assignment_utils`, kept so that plug-ins written against
taskassign 0.1 (``from taskassign.utils import default_standby_task_assignment``) keep working."""

from taskassign.task_assignment_utils import (
    RackAwareOptimizationParams,
    default_standby_task_assignment,
    identity_assignment,
    optimize_rack_aware_active_tasks,
    optimize_rack_aware_standby_tasks,
    validate_task_assignment,
)

__all__ = (
    "RackAwareOptimizationParams",
    "default_standby_task_assignment",
    "identity_assignment",
    "optimize_rack_aware_active_tasks",
    "optimize_rack_aware_standby_tasks",
    "validate_task_assignment",
)
