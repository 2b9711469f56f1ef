"""The typed run artefact and the store that reads and writes it (bottom layer: every layer
above may read a run directory)."""

from toolscore.records.files import NotStored, RunStoreError, UnsafeFile
from toolscore.records.schema import (
    FORMAT_VERSION,
    RecordError,
    RunConfig,
    SampleRecord,
    json_schema,
)
from toolscore.records.store import (
    RUN_FILE,
    SAMPLES_FILE,
    SCORES_FILE,
    RunStore,
    sample_key,
)

__all__ = ["FORMAT_VERSION", "RUN_FILE", "SAMPLES_FILE", "SCORES_FILE", "NotStored",
           "RecordError", "RunConfig", "RunStore", "RunStoreError", "SampleRecord",
           "UnsafeFile", "json_schema", "sample_key"]
