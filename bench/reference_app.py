"""Reference page of the server and browser benchmarks: one slider, one tile and four 100-point plotly charts
that follow it."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

POINTS = 100

frequency = st.slider("Frequency", min_value=1, max_value=100, value=10)
x = np.linspace(0.0, 1.0, POINTS)
y = np.sin(2 * np.pi * frequency * x) + x * frequency / 10
st.metric("Sum", f"{float(np.abs(y).sum()):,.1f}")
figures = {
    "line": go.Figure(go.Scatter(x=x, y=y, mode="lines")),
    "bar": go.Figure(go.Bar(x=np.arange(POINTS), y=np.abs(y))),
    "scatter": go.Figure(go.Scatter(x=np.cos(frequency * x), y=y, mode="markers")),
    "area": go.Figure(go.Scatter(x=x, y=np.cumsum(np.abs(y)), fill="tozeroy")),
}
for name, figure in figures.items():
    st.plotly_chart(figure.update_layout(title=name), key=name)
