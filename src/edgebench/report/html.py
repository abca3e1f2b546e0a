"""The report as one self-contained HTML file: Plotly's script inlined, every style inline, no request at all.

Plotly (the optional extra ``edgebench[report]``) gives hover values and zoom, and draws SVG, so the page prints to
PDF as it shows.  Each figure's data sits in the page as JSON and is drawn on load; when all are drawn the page
sets ``data-rendered`` on ``<body>`` (what the browser test waits for).  The summary table keeps each cell's raw
number in ``data-value`` (sorting uses it, and the test compares it with the store).
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any

from edgebench.errors import UsageError
from edgebench.markup import html_text, script_json
from edgebench.measure.repeats import grouped
from edgebench.report import figures as f
from edgebench.report.columns import SUMMARY_COLUMNS, summary_values
from edgebench.report.content import ReportContent, Table

INSTALL = "pip install 'edgebench[report]'"
_COLORS = {
    "window": "rgba(44, 160, 44, 0.12)",
    "idle": "rgba(120, 120, 120, 0.12)",
    "throttle": "rgba(214, 39, 40, 0.18)",
}


def plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise UsageError("report", f"the HTML report needs plotly: {INSTALL}") from None
    return get_plotlyjs()


def _num(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _labels(values: Any) -> list[Any]:
    """A trace's x values, its text ones (models, labels: data) as Plotly shows text literally."""
    return [html_text(v) if isinstance(v, str) else v for v in values]


def plotly_figure(fig: f.Figure) -> dict[str, Any]:
    """A :class:`Figure` as Plotly's ``{data, layout}``."""
    data = []
    for t in fig.traces:
        base: dict[str, Any] = {"name": html_text(t.name), "yaxis": t.axis}
        if t.axis == "y2":  # temperatures beside clocks: dashed, told apart from the clock lines in print too
            base["line"] = {"dash": "dash"}
        if t.kind == "hist":
            data.append({**base, "type": "histogram", "x": [_num(v) for v in t.y], "nbinsx": 30})
        elif t.kind == "bar":
            data.append({**base, "type": "bar", "x": _labels(t.x), "y": [_num(v) for v in t.y]})
        else:
            best = t.name == "best per model"
            marker = {"symbol": "star", "size": 14, "color": "black"} if best else {"size": 7}
            data.append({**base, "type": "scatter", "mode": "lines+markers" if t.kind == "line" and len(t.x) < 60
                         else ("lines" if t.kind == "line" else "markers"), "x": _labels(t.x),
                         "y": [_num(v) for v in t.y], "marker": marker})  # fmt: skip
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for x in fig.vlines:
        shapes.append({"type": "line", "x0": x, "x1": x, "yref": "paper", "y0": 0, "y1": 1,
                       "line": {"color": "rgba(0,0,0,0.35)", "width": 1, "dash": "dot"}})  # fmt: skip
    for y, label in fig.hlines:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": y, "y1": y,
                       "line": {"color": "#555", "width": 1.5, "dash": "dash"}})  # fmt: skip
        annotations.append({"xref": "paper", "x": 1, "y": y, "text": html_text(label), "showarrow": False,
                            "xanchor": "right", "yanchor": "bottom"})  # fmt: skip
    for span in fig.spans:
        shapes.append({"type": "rect", "x0": span.x0, "x1": span.x1, "yref": "paper", "y0": 0, "y1": 1,
                       "fillcolor": _COLORS[span.kind], "line": {"width": 0}, "layer": "below"})  # fmt: skip
        annotations.append({"x": span.x0, "yref": "paper", "y": 1, "text": html_text(span.label), "showarrow": False,
                            "xanchor": "left", "yanchor": "bottom", "font": {"size": 10}})  # fmt: skip
    layout: dict[str, Any] = {
        "title": {"text": html_text(fig.title), "font": {"size": 14}},
        "xaxis": {"title": {"text": html_text(fig.x_label)}, "type": "log" if fig.x_log else "-"},
        "yaxis": {"title": {"text": html_text(fig.y_label)}, "rangemode": "tozero"},
        "shapes": shapes,
        "annotations": annotations,
        "margin": {"l": 60, "r": 60 if fig.y2_label else 20, "t": 50, "b": 50},
        "height": 380,
        "legend": {"orientation": "h", "y": -0.2},
        "barmode": "stack" if any(t.stack for t in fig.traces) else "group",
        "hovermode": "closest",
    }
    if fig.y2_label:
        layout["yaxis2"] = {"title": {"text": html_text(fig.y2_label)}, "overlaying": "y", "side": "right"}
    return {"data": data, "layout": layout}


def _cell(value: Any, digits: int | None) -> str:
    if value is None:
        return '<td class="na" data-value="">-</td>'
    if digits is None:
        return f'<td data-value="{html_text(str(value))}">{html_text(str(value))}</td>'
    return f'<td class="n" data-value="{json.dumps(value)}">{value:,.{digits}f}</td>'


def summary_table(content: ReportContent) -> str:
    head = "".join(f'<th data-field="{c.field}" title="sort">{html_text(c.title)}</th>' for c in SUMMARY_COLUMNS)
    rows = []
    for r in grouped(content.results):  # a configuration's repeats together
        values = summary_values(r)
        cells = "".join(_cell(values[c.field], c.digits).replace("<td", f'<td data-field="{c.field}"', 1)
                        for c in SUMMARY_COLUMNS)  # fmt: skip
        rows.append(f'<tr data-trial="{html_text(r.trial_id)}" class="{r.status}">{cells}</tr>')
    return (f'<table id="summary" class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def _plain_table(t: Table) -> str:
    head = "".join(f"<th>{html_text(c)}</th>" for c in t.columns)
    body = []
    for row in t.rows:
        cells = [_cell(v, 2 if isinstance(v, float) else None) for v in row]
        body.append(f"<tr>{''.join(cells)}</tr>")
    if not body:
        return f'<p class="missing" data-key="{t.key}"><b>{html_text(t.title)}</b>: no successful trial to tabulate</p>'
    note = f'<p class="note">{html_text(t.note)}</p>' if t.note else ""
    return (f'<div class="table" data-key="{t.key}"><h3>{html_text(t.title)}</h3><table class="sortable">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}</div>")  # fmt: skip


def _view(view: f.View | Table, figures: dict[str, Any]) -> str:
    if isinstance(view, Table):
        return _plain_table(view)
    if isinstance(view, f.Missing):
        return (f'<p class="missing" data-key="{html_text(view.key)}"><b>{html_text(view.title)}</b>: not '
                f"measured: {html_text(view.reason)}</p>")  # fmt: skip
    dom_id = f"fig{len(figures)}"
    figures[dom_id] = plotly_figure(view)
    notes = "".join(f'<p class="note">{html_text(n)}</p>' for n in view.notes)
    return f'<figure><div class="chart" id="{dom_id}" data-key="{html_text(view.key)}"></div>{notes}</figure>'


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}h3{font-size:1em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{border:1px solid #ddd;padding:.25em .5em}
th{background:#f3f3f3;cursor:pointer;user-select:none}td.n{text-align:right;font-variant-numeric:tabular-nums}
td.na{color:#999;text-align:center}tr.ok td{}tr:not(.ok) td[data-field=status]{color:#b00;font-weight:bold}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
figure{margin:1em 0;break-inside:avoid;page-break-inside:avoid}.chart{width:100%;min-height:380px}
.note{font-size:.8em;color:#555;margin:.2em 0}.missing{background:#fff8e1;border-left:4px solid #f0b400;
padding:.4em .7em;font-size:.9em}.meta{color:#555;font-size:.85em}
@media print{body{max-width:none;margin:0}h2{break-before:auto}th{cursor:auto}.modebar{display:none!important}}
"""

_SCRIPT = """
(function(){
  function sortable(table){
    table.querySelectorAll('th').forEach(function(th, i){
      th.addEventListener('click', function(){
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var desc = th.classList.contains('asc');
        table.querySelectorAll('th').forEach(function(h){ h.classList.remove('asc', 'desc'); });
        th.classList.add(desc ? 'desc' : 'asc');
        rows.sort(function(a, b){
          var x = a.cells[i].dataset.value, y = b.cells[i].dataset.value;
          var nx = parseFloat(x), ny = parseFloat(y), c;
          if (x === '' || y === '') c = (x === '') - (y === '');
          else if (!isNaN(nx) && !isNaN(ny)) c = nx - ny; else c = x < y ? -1 : x > y ? 1 : 0;
          return desc ? -c : c;
        });
        rows.forEach(function(r){ body.appendChild(r); });
      });
    });
  }
  document.querySelectorAll('table.sortable').forEach(sortable);
  var figs = JSON.parse(document.getElementById('figures').textContent);
  // One chart at a time, top of the page first, yielding between charts: the first ones show at once and the page
  // stays responsive while the rest are drawn.  Printing draws whatever is left first.
  var ids = Object.keys(figs), queue = ids.slice(), drawn = 0;
  function draw(id){
    return Plotly.newPlot(id, figs[id].data, figs[id].layout, {responsive: true, displaylogo: false}).then(function(){
      drawn += 1;
      if (drawn === 1) document.body.dataset.firstDrawnMs = String(Math.round(performance.now()));
      if (drawn === ids.length) document.body.dataset.rendered = String(drawn);
    });
  }
  function next(){
    if (!queue.length) return;
    draw(queue.shift()).then(function(){ setTimeout(next, 0); },
                              function(e){ console.error('chart failed: ' + e); });
  }
  if (!ids.length) document.body.dataset.rendered = '0';
  next();
  window.addEventListener('beforeprint', function(){
    while (queue.length) draw(queue.shift());
    ids.forEach(function(id){ Plotly.Plots.resize(id); });
  });
})();
"""


def render_html(content: ReportContent, generated_by: str) -> str:
    js = plotly_js()
    figures: dict[str, Any] = {}
    parts = []
    for section in content.sections:
        body = "".join(_view(v, figures) for v in section.views)
        text = f"<p>{html_text(section.text)}</p>" if section.text else ""
        parts.append(f"<section><h2>{html_text(section.title)}</h2>{text}{body}</section>")
    missing = content.missing()
    not_measured = "".join(f"<li><b>{html_text(m.title)}</b>: {html_text(m.reason)}</li>" for m in missing)
    notes = "".join(f'<p class="note">{html_text(n)}</p>' for n in content.notes)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    data = script_json(figures)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; \
style-src 'unsafe-inline'; img-src data:; font-src data:">
<title>{html_text(content.title)}</title><style>{_STYLE}</style></head>
<body><h1>{html_text(content.title)}</h1>
<p class="meta">{len(content.results)} trials; {html_text(generated_by)}, {when}. Click a column to sort; hover a
chart for values, drag to zoom, double-click to reset.</p>{notes}
<h2>Summary</h2>{summary_table(content)}
{"".join(parts)}
<section id="not-measured"><h2>Not measured, and why</h2>{
        f"<ul>{not_measured}</ul>" if missing else "<p>Every view above was measured.</p>"
    }</section>
<script>{js}</script>
<script type="application/json" id="figures">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
