"""`kg run`'s run is a run of the code location's job, as one the UI, the sensor or a schedule launches.

The run is created with the origin of workspace.yaml's code location (its repository label tag, its Python
origin), so the UI lists it under the job, in the timeline and the job's sparkline, and re-executes it from
the loaded location. It is then executed here, in this process, with the in-process executor (as every
kg_assets run is): `kg run` keeps its own summary, exit codes, pool waits and recovery of dead runs, and
needs no daemon or run worker.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

import dagster as dg
from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.definitions.job_base import InMemoryJob
from dagster._core.definitions.repository_definition.valid_definitions import SINGLETON_REPOSITORY_NAME
from dagster._core.execution.api import execute_run
from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
from dagster._core.remote_origin import (
    ManagedGrpcPythonEnvCodeLocationOrigin,
    RemoteJobOrigin,
    RemoteRepositoryOrigin,
)
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

# workspace.yaml's code location: the UI finds a run under a job by this label (tag `.dagster/repository`).
DEFINITIONS_MODULE = "kg_assets.definitions"
DEFINITIONS_ATTRIBUTE = "defs"
LOCATION_NAME = "kg_assets"


def repository_origin() -> RemoteRepositoryOrigin:
    """The repository as `dagster dev -w workspace.yaml` loads it (a module in this Python environment)."""
    target = LoadableTargetOrigin(executable_path=sys.executable, module_name=DEFINITIONS_MODULE,
                                  working_directory=os.getcwd())
    return RemoteRepositoryOrigin(ManagedGrpcPythonEnvCodeLocationOrigin(target, LOCATION_NAME),
                                  SINGLETON_REPOSITORY_NAME)


def repository_label() -> str:
    """`__repository__@kg_assets`: the value of a location's runs' `.dagster/repository` tag."""
    return repository_origin().get_label()


def execute_location_run(instance: dg.DagsterInstance, job: dg.JobDefinition, *, tags: Mapping[str, str],
                         run_config: Mapping, asset_selection: Sequence[dg.AssetKey] | None) -> dg.JobExecutionResult:
    """Create the run with the location's origin, then execute it in this process. The job must use the
    in-process executor (`definitions.build_definitions` sets it)."""
    python_origin = JobPythonOrigin(job.name, RepositoryPythonOrigin(
        sys.executable, ModuleCodePointer(DEFINITIONS_MODULE, DEFINITIONS_ATTRIBUTE, os.getcwd())))
    run = instance.create_run_for_job(
        job, run_config=run_config, tags=tags,
        asset_selection=set(asset_selection) if asset_selection is not None else None,
        remote_job_origin=RemoteJobOrigin(repository_origin(), job.name), job_code_origin=python_origin,
    )
    return execute_run(InMemoryJob(job), run, instance)
