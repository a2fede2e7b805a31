"""`bench.keypress_profile`'s counting: messages by kind with their bytes, the first tile's place, and a CPU
profile's time by script file. Messages and profiles are built by hand here; no browser."""

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.keypress_profile import census, cpu_by_file, kind, tile_index


def _element(kind_: str) -> bytes:
    message = ForwardMsg()
    if kind_ == "metric":
        message.delta.new_element.metric.body = "$446k"
    elif kind_ == "markdown":
        message.delta.new_element.markdown.body = "final run 48.6 % of the programme"
    elif kind_ == "column":
        message.delta.add_block.column.weight = 0.5
    elif kind_ == "finished":
        message.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    return message.SerializeToString()


@pytest.mark.parametrize(("built", "expected"), [
    ("metric", "metric"),
    ("markdown", "markdown"),
    ("column", "block:column"),
    ("finished", "script_finished"),
])
def test_kind_names_elements_blocks_and_other_messages(built, expected):
    message = ForwardMsg()
    message.ParseFromString(_element(built))
    assert kind(message) == expected


def test_census_counts_each_kind_with_its_bytes():
    frames = [_element("markdown"), _element("metric"), _element("markdown"), _element("finished")]
    result = census(frames)
    assert result.count == {"markdown": 2, "metric": 1, "script_finished": 1}
    assert result.size_bytes["markdown"] == len(frames[0]) + len(frames[2])
    assert result.size_bytes["metric"] == len(frames[1])


@pytest.mark.parametrize(("kinds", "expected"), [
    (["markdown", "metric", "metric"], 1),
    (["metric"], 0),
    (["markdown", "finished"], None),
])
def test_tile_index_is_the_first_metric(kinds, expected):
    assert tile_index([_element(k) for k in kinds]) == expected


def test_cpu_by_file_gives_each_sample_the_time_until_the_next():
    # CDP: timeDeltas[i] is the time from sample i-1 to sample i, so sample i lasts timeDeltas[i+1]
    profile = {"nodes": [{"id": 1, "callFrame": {"url": "http://x/static/js/react-dom.js", "functionName": "se"}},
                         {"id": 2, "callFrame": {"url": "", "functionName": "(program)"}},
                         {"id": 3, "callFrame": {"url": "", "functionName": "getBBox"}}],
               "samples": [1, 2, 1, 3], "timeDeltas": [7, 100, 250, 40]}
    assert cpu_by_file(profile) == {"react-dom.js": 100 + 40, "(program)": 250, "(getBBox)": 0}
