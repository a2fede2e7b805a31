"""`ui.cache.DrawnChart`: a cached chart handed to `st.plotly_chart` as the dict it was made with, and pickled by
`st.cache_data` as that dict (a `go.Figure` is rebuilt and checked property by property when unpickled)."""

import pickle

import plotly.graph_objects as go
from plotly.basedatatypes import BaseFigure

from dashboard.ui.cache import DrawnChart


def _figure() -> go.Figure:
    return go.Figure(go.Bar(x=["a", "b"], y=[1.0, 2.5]), layout={"title": {"text": "Spend"}, "template": "none"})


def test_it_hands_over_the_figures_dict_without_copying_it():
    chart = DrawnChart(_figure())
    assert chart.to_dict() is chart.to_dict()
    assert list(chart.to_dict()["data"][0]["y"]) == [1.0, 2.5]
    assert chart.to_dict()["layout"]["title"]["text"] == "Spend"


def test_it_pickles_as_its_dict_and_comes_back_without_building_a_figure(monkeypatch):
    chart = DrawnChart(_figure())
    built = []
    monkeypatch.setattr(BaseFigure, "__init__", lambda self, *args, **kwargs: built.append(args))
    again = pickle.loads(pickle.dumps(chart))
    assert isinstance(again, DrawnChart)
    assert again.to_dict() == chart.to_dict()
    assert built == []  # a go.Figure's pickle would have called BaseFigure.__init__ with its whole dict


def test_a_pickled_go_figure_is_built_again(monkeypatch):  # why DrawnChart has its own pickle
    built = []
    original = BaseFigure.__init__

    def counting(self, *args, **kwargs):
        built.append(args)
        original(self, *args, **kwargs)

    figure = _figure()
    monkeypatch.setattr(BaseFigure, "__init__", counting)
    pickle.loads(pickle.dumps(figure))
    assert built
