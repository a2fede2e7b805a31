"""Scenario bundles: one scenario exports as a plain scenario file, several as an array; bad files say where."""

import json

import pytest

from dashboard.cli import main
from dashboard.core.scenario import Scenario, ScenarioError
from dashboard.core.scenario_bundle import export_bundle, read_bundle

ONE = Scenario(name="Option A (8k H100)", gpu_count=8192, mfu=0.38)
THREE = [
    Scenario(name="Baseline", gpu_type="H100"),
    Scenario(name="B200 spot", gpu_type="B200", reserved_share=0.5, spot_share=0.5),
    Scenario(name="MoE", total_params=671e9, active_params=37e9, tokens=14.8e12),
]


def test_one_scenario_exports_as_its_plain_object():
    text = export_bundle([ONE])
    data = json.loads(text)
    assert data == ONE.to_json_dict()
    assert data["name"] == "Option A (8k H100)"
    assert data["gpu_count"] == 8192
    assert text.startswith('{\n  "schema": 2,\n  "name": "Option A (8k H100)",')
    assert text.endswith("}\n")
    assert read_bundle(text) == [ONE]


def test_three_scenarios_export_as_an_array_in_order():
    text = export_bundle(THREE)
    data = json.loads(text)
    assert [item["name"] for item in data] == ["Baseline", "B200 spot", "MoE"]
    assert [item["gpu_type"] for item in data] == ["h100", "b200", "h100"]
    assert text.startswith('[\n  {\n    "schema": 2,')
    assert read_bundle(text) == THREE
    assert read_bundle(text.encode("utf-8")) == THREE


def test_an_exported_single_scenario_works_with_the_cli(tmp_path, capsys):
    path = tmp_path / "option-a.json"
    path.write_text(export_bundle([ONE]), encoding="utf-8")
    assert main(["estimate", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["name"] == "Option A (8k H100)"


def test_non_ascii_names_survive_the_round_trip():
    scenario = Scenario(name="Prüfung: 计划 B")
    assert '"name": "Prüfung: 计划 B"' in export_bundle([scenario])
    assert read_bundle(export_bundle([scenario]).encode("utf-8")) == [scenario]


@pytest.mark.parametrize("text", ['\ufeff{"name": "bom"}', b'\xef\xbb\xbf{"name": "bom"}'])
def test_a_byte_order_mark_is_ignored(text):
    assert [scenario.name for scenario in read_bundle(text)] == ["bom"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        ("name: A", "not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (b"\xff\xfe\x00garbage", "not valid JSON:"),
        ("[]", "the file holds an empty array: it has no scenarios to import"),
        ("42", "a scenario file holds one scenario object or an array of them, not a JSON number"),
        ('"text"', "a scenario file holds one scenario object or an array of them, not a JSON string"),
        ("null", "a scenario file holds one scenario object or an array of them, not a JSON null"),
        ("true", "a scenario file holds one scenario object or an array of them, not a JSON true/false value"),
        ('{"mfu": 1.5}', "mfu = 1.5 is out of range (allowed: ≥ 0.01 and ≤ 1)"),
        ('[{"mfu": 0.5}, {"mfu": 2}, {}]', "scenario 2 of 3: mfu = 2 is out of range (allowed: ≥ 0.01 and ≤ 1)"),
        ('[{}, 5]', "scenario 2 of 2: a scenario must be a JSON object of key: value pairs"),
        ('[{"colour": "blue"}]', "scenario 1 of 1: unknown key 'colour'"),
        ('[{}, {}, {"gpu_type": "H900"}]', "scenario 3 of 3: gpu_type = 'H900': unknown gpu_type 'H900'"),
        ('[[{}]]', "scenario 1 of 1: a scenario must be a JSON object of key: value pairs"),
    ],
)
def test_bad_bundles_say_what_and_where(text, message):
    with pytest.raises(ScenarioError) as error:
        read_bundle(text)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_exporting_nothing_is_refused():
    with pytest.raises(ScenarioError, match="^nothing to export: choose at least one scenario$"):
        export_bundle([])
