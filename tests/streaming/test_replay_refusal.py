"""A job with a processing guarantee refuses, when submitted, a stream source that cannot give
its items again after a restart (issue 25, point 2): a socket source's restarted job failed on
'Offsets committed out of order', and nothing said so before."""

import pytest

from sparkjet import JobConfig, JobError, Pipeline, ProcessingGuarantee, Sinks, Sources

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("guarantee", [ProcessingGuarantee.AT_LEAST_ONCE, ProcessingGuarantee.EXACTLY_ONCE])
def test_a_guaranteed_job_refuses_a_socket_source_naming_it_and_what_to_use(jet, tmp_path, guarantee):
    p = Pipeline.create()
    p.readFrom(Sources.socket("localhost", 9)).withoutTimestamps().writeTo(Sinks.list("never"))
    config = JobConfig().setName("socket-guaranteed").setProcessingGuarantee(guarantee)
    with pytest.raises(JobError, match=r"Job 'socket-guaranteed' has a processing guarantee, but its source '.*' "
                       r"cannot keep it: Sources.socket\('localhost', 9\) cannot give its lines again .*fileWatcher"):
        jet.newJob(p, config.setCheckpointLocation(str(tmp_path / "checkpoint")))
    assert not (tmp_path / "checkpoint").exists(), "refused before anything was written"
